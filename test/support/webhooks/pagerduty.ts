import { createHmac } from 'node:crypto';

// PagerDuty V3 webhook payloads built from the example in PagerDuty's webhook documentation
// (developer-docs, webhooks overview: an incident event for PGR0VU2), and their signatures.

export function pagerDutyEvent(
  eventType: string,
  data: Record<string, unknown> = {},
  eventId = '5ac64822-4adc-4fda-ade0-410becf0de4f',
) {
  return {
    event: {
      id: eventId,
      event_type: eventType,
      resource_type: 'incident',
      occurred_at: '2020-10-02T18:45:22.169Z',
      agent: {
        html_url: 'https://acme.pagerduty.com/users/PLH1HKV',
        id: 'PLH1HKV',
        self: 'https://api.pagerduty.com/users/PLH1HKV',
        summary: 'Tenex Engineer',
        type: 'user_reference',
      },
      client: { name: 'PagerDuty' },
      data: {
        id: 'PGR0VU2',
        type: 'incident',
        self: 'https://api.pagerduty.com/incidents/PGR0VU2',
        html_url: 'https://acme.pagerduty.com/incidents/PGR0VU2',
        number: 2,
        status: eventType === 'incident.resolved' ? 'resolved' : 'triggered',
        incident_key: 'd3640fbd41094207a1c11e58e46b1662',
        created_at: '2020-04-09T15:16:27Z',
        title: 'A little bump in the road',
        service: {
          html_url: 'https://acme.pagerduty.com/services/PF9KMXH',
          id: 'PF9KMXH',
          self: 'https://api.pagerduty.com/services/PF9KMXH',
          summary: 'API Service',
          type: 'service_reference',
        },
        assignees: [
          {
            html_url: 'https://acme.pagerduty.com/users/PTUXL6G',
            id: 'PTUXL6G',
            self: 'https://api.pagerduty.com/users/PTUXL6G',
            summary: 'User 123',
            type: 'user_reference',
          },
        ],
        priority: {
          html_url: 'https://acme.pagerduty.com/account/incident_priorities',
          id: 'PSO75BM',
          self: 'https://api.pagerduty.com/priorities/PSO75BM',
          summary: 'P1',
          type: 'priority_reference',
        },
        urgency: 'high',
        conference_bridge: {
          conference_number: '+1 1234123412,,987654321#',
          conference_url: 'https://example.com',
        },
        resolve_reason: null,
        ...data,
      },
    },
  };
}

/** The X-PagerDuty-Signature value for `body` signed with `secret`. */
export const signPagerDuty = (body: Buffer | string, secret: string): string =>
  `v1=${createHmac('sha256', secret).update(body).digest('hex')}`;
