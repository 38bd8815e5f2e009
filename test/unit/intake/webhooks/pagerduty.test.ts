import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../../src/config/schema.js';
import {
  mapPagerDuty,
  parsePagerDuty,
  verifyPagerDutySignature,
} from '../../../../src/intake/webhooks/pagerduty.js';
import { groupingOptions } from '../../../../src/server/routes/intake.js';
import { pagerDutyEvent, signPagerDuty } from '../../../support/webhooks/pagerduty.js';

const SECRET = 'whsec-test-7b2f0c9e';
const options = groupingOptions(configSchema.parse({}));

describe('X-PagerDuty-Signature', () => {
  const body = Buffer.from(JSON.stringify(pagerDutyEvent('incident.triggered')));

  it('accepts the v1 HMAC-SHA256 of the raw body, in any position of a rotation list', () => {
    const good = signPagerDuty(body, SECRET);
    expect(verifyPagerDutySignature(body, good, SECRET)).toEqual({ ok: true });
    const rotation = `${signPagerDuty(body, 'the-old-secret')},${good}`;
    expect(verifyPagerDutySignature(body, rotation, SECRET)).toEqual({ ok: true });
    expect(verifyPagerDutySignature(body, `${good.toUpperCase().replace('V1=', 'v1=')}`, SECRET)).toEqual({
      ok: true,
    });
  });

  it('refuses a missing header, other versions, a wrong secret, a changed body and malformed hex, saying why', () => {
    expect(verifyPagerDutySignature(body, undefined, SECRET)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/missing X-PagerDuty-Signature/),
    });
    expect(verifyPagerDutySignature(body, 'v2=abc', SECRET)).toMatchObject({
      message: expect.stringMatching(/no v1= signature/),
    });
    expect(verifyPagerDutySignature(body, signPagerDuty(body, 'wrong'), SECRET)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/none of the 1 v1 signature\(s\) .* matches/),
    });
    const changed = Buffer.from(body.toString().replace('triggered', 'resolved'));
    expect(verifyPagerDutySignature(changed, signPagerDuty(body, SECRET), SECRET).ok).toBe(false);
    expect(verifyPagerDutySignature(body, 'v1=zz,v1=12', SECRET).ok).toBe(false);
  });

  it('signs the exact bytes: re-serialised JSON does not verify', () => {
    const pretty = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
    const header = `v1=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    expect(verifyPagerDutySignature(pretty, header, SECRET).ok).toBe(false);
  });
});

describe('PagerDuty events -> alerts', () => {
  it('incident.triggered becomes a firing alert carrying the PagerDuty incident for the notifier', () => {
    const parsed = parsePagerDuty(pagerDutyEvent('incident.triggered'));
    if (!parsed.ok) throw new Error(parsed.message);
    const event = mapPagerDuty(parsed.value, options);
    expect(event).toMatchObject({
      kind: 'alert',
      alert: {
        status: 'firing',
        key: 'pagerduty:event:5ac64822-4adc-4fda-ade0-410becf0de4f',
        aliasKey: 'pagerduty:incident:PGR0VU2',
        fields: {
          severity: 'critical',
          faultType: 'PagerDutyIncident',
          summary: 'A little bump in the road',
        },
        sourceRef: {
          type: 'pagerduty',
          id: 'PGR0VU2',
          url: 'https://acme.pagerduty.com/incidents/PGR0VU2',
          incidentKey: 'd3640fbd41094207a1c11e58e46b1662',
        },
      },
    });
  });

  it('reads an alertname from an Alertmanager-made title; reopened fires again; resolved resolves; others are ignored', () => {
    const titled = pagerDutyEvent('incident.reopened', { title: '[FIRING:3] KubePodCrashLooping shop/web' });
    const parsed = parsePagerDuty(titled);
    if (!parsed.ok) throw new Error(parsed.message);
    expect(mapPagerDuty(parsed.value, options)).toMatchObject({
      kind: 'alert',
      alert: { status: 'firing', fields: { alertname: 'KubePodCrashLooping', faultType: 'CrashLoop' } },
    });
    const resolved = parsePagerDuty(pagerDutyEvent('incident.resolved', {}, 'ev-2'));
    if (!resolved.ok) throw new Error(resolved.message);
    expect(mapPagerDuty(resolved.value, options)).toMatchObject({
      kind: 'alert',
      alert: { status: 'resolved', key: 'pagerduty:incident:PGR0VU2', resolutionKey: 'pagerduty:event:ev-2' },
    });
    const ack = parsePagerDuty(pagerDutyEvent('incident.acknowledged'));
    if (!ack.ok) throw new Error(ack.message);
    expect(mapPagerDuty(ack.value, options)).toMatchObject({
      kind: 'ignored',
      reason: expect.stringMatching(/incident.acknowledged does not start or end an investigation/),
    });
  });

  it('says what is wrong with a body that is not a V3 webhook', () => {
    expect(parsePagerDuty({ messages: [] })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/not a PagerDuty V3 webhook payload: event: /),
    });
  });
});
