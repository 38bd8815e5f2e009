import { describe, expect, it } from 'vitest';
import { denialRecord } from '../../../src/run/kubectl-guard.js';

const at = new Date('2026-11-23T10:00:00Z');
const record = (command: string | undefined, tool = 'Bash') =>
  denialRecord({ tool, ...(command !== undefined ? { command } : {}) }, at, 'claude');

describe('denialRecord: a CLI refusal in the call log', () => {
  it('parses the kubectl command of a compound shell line, behind variable assignments and a path', () => {
    expect(record('cd /tmp && KUBECONFIG=/tmp/x /usr/bin/kubectl -n shop delete pod web-1; echo $?')).toEqual(
      {
        at: at.toISOString(),
        tool: 'kubectl',
        by: 'cli',
        argv: ['-n', 'shop', 'delete', 'pod', 'web-1'],
        normalized: 'delete pods/web-1 --namespace=shop',
        category: 'mutate',
        decision: 'refused',
        rule: 'claude permission rules',
        exitCode: null,
        durationMs: 0,
        stdoutBytes: 0,
        stderrBytes: 0,
      },
    );
  });

  it('records a refused helm command with its credentials redacted', () => {
    expect(record('helm upgrade web ./chart --password hunter2')).toMatchObject({
      tool: 'helm',
      argv: ['upgrade', 'web', './chart', '--password', '[REDACTED]'],
      normalized: "upgrade web ./chart --password '[REDACTED]'",
      category: 'unknown',
    });
  });

  it('leaves out refusals that touched no cluster tool', () => {
    expect(record('curl https://example.com')).toBeUndefined();
    expect(record(undefined, 'WebFetch')).toBeUndefined();
  });
});
