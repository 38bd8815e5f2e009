import { describe, expect, it } from 'vitest';
import { hostToAgent } from '../../../src/context/paths.js';

const mounts = [
  { host: '/srv/incidents/inc-1', agent: '/workspace' },
  { host: '/srv/incidents/inc-1/.triage/runs/r1', agent: '/workspace/.triage/runs/r1' },
  { host: '/srv/incidents/inc-1/output', agent: '/workspace/output' },
  { host: '/etc/kube/config', agent: '/etc/triage/kubeconfig' },
];

describe('hostToAgent', () => {
  const rewrite = hostToAgent(mounts);

  it('rewrites host paths under a mount to the agent path, the longest mount first', () => {
    expect(
      rewrite(
        'Full report: /srv/incidents/inc-1/.triage/runs/r1/triage/triage-report.md\nEvidence: /srv/incidents/inc-1/.triage/runs/r1/triage/evidence/',
      ),
    ).toBe(
      'Full report: /workspace/.triage/runs/r1/triage/triage-report.md\nEvidence: /workspace/.triage/runs/r1/triage/evidence/',
    );
    expect(rewrite('cat /srv/incidents/inc-1/incident.json')).toBe('cat /workspace/incident.json');
    expect(rewrite('KUBECONFIG=/etc/kube/config')).toBe('KUBECONFIG=/etc/triage/kubeconfig');
  });

  it('matches whole path components only, and only where a path starts', () => {
    const text =
      '/srv/incidents/inc-10/x /srv/incidents/inc-1-old /var/srv/incidents/inc-1/x a/srv/incidents/inc-1';
    expect(rewrite(text)).toBe(text);
    expect(rewrite('`/srv/incidents/inc-1`, "/srv/incidents/inc-1/output".')).toBe(
      '`/workspace`, "/workspace/output".',
    );
  });

  it('rewrites once: a rewritten path is not rewritten again', () => {
    const chain = hostToAgent([
      { host: '/a', agent: '/b' },
      { host: '/b', agent: '/c' },
    ]);
    expect(chain('/a/x /b/y')).toBe('/b/x /c/y');
  });

  it('leaves text alone with no mapping or only identity mappings (the process engine)', () => {
    const text = 'Full report: /srv/incidents/inc-1/.triage/runs/r1/triage/triage-report.md';
    expect(hostToAgent([])(text)).toBe(text);
    expect(hostToAgent([{ host: '/srv', agent: '/srv' }])(text)).toBe(text);
  });

  it('treats regex characters in host paths literally', () => {
    expect(hostToAgent([{ host: '/tmp/a+b (1)', agent: '/w' }])('/tmp/a+b (1)/f /tmp/aab (1)/f')).toBe(
      '/w/f /tmp/aab (1)/f',
    );
  });
});
