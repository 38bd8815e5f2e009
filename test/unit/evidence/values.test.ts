import { describe, expect, it } from 'vitest';
import { keyValues, checkValue, type ValueSource } from '../../../src/evidence/values.js';

const describeApi: ValueSource = {
  label: 'kubectl describe pod api-1 -n shop',
  names: ['api-1'],
  lines: () => [],
  parsed: {
    pods: [
      {
        name: 'api-1',
        containers: [
          {
            name: 'api',
            image: 'registry.example/shop/api:2.3.1',
            state: 'Waiting',
            reason: 'CrashLoopBackOff',
            lastState: 'Terminated',
            lastReason: 'Error',
            lastExitCode: 1,
            restartCount: 14,
            limits: { memory: '256Mi', cpu: '500m' },
            requests: { memory: '128Mi' },
          },
        ],
      },
    ],
    events: [],
  },
};

const check = (text: string, subjects = ['api-1']) =>
  keyValues(text).map((v) => checkValue(v, [describeApi], subjects));

describe('key values of a claim against the fields of what it cites', () => {
  it('reads reasons (OOM in prose too), exit codes, restart counts, quantities, images and literals, not negated ones', () => {
    expect(
      keyValues('the container was OOM-killed (exit code 137) after 14 restarts').map((v) => [
        v.kind,
        v.value,
      ]),
    ).toEqual([
      ['reason', 'OOMKilled'],
      ['exit code', '137'],
      ['restart count', '14'],
    ]);
    expect(
      keyValues(
        'its memory limit is 256Mi and it requests 500m CPU; image registry.example/shop/api:2.3.1',
      ).map((v) => [v.kind, v.value, v.role]),
    ).toEqual([
      ['quantity', '256Mi', 'limit'],
      ['quantity', '500m', 'request'],
      ['image', 'registry.example/shop/api:2.3.1', undefined],
    ]);
    expect(
      keyValues('not an OOM: the old OOMKilled of the worker is unrelated').filter(
        (v) => v.kind === 'reason',
      ),
    ).toEqual([]);
    expect(keyValues('HTTP_PORT is "8O80"').map((v) => v.value)).toEqual(['8O80']);
  });

  it('contradicts a terminated reason, an exit code, a limit and an image, naming the field and both values', () => {
    expect(
      check('last state OOMKilled, exit code 137, memory limit 1Gi, image registry.example/shop/api:2.3.2'),
    ).toEqual([
      expect.objectContaining({ kind: 'contradicted', field: 'api last state reason', actual: 'Error' }),
      expect.objectContaining({ kind: 'contradicted', field: 'api last state exit code', actual: '1' }),
      expect.objectContaining({ kind: 'contradicted', field: 'api memory limit', actual: '256Mi' }),
      expect.objectContaining({
        kind: 'contradicted',
        field: 'api image',
        actual: 'registry.example/shop/api:2.3.1',
      }),
    ]);
  });

  it('confirms what the fields show, and leaves unknown what they do not (another pod, a waiting reason not shown)', () => {
    expect(
      check('CrashLoopBackOff, last state Error, exit code 1, 14 restarts, 256Mi limit').map((c) => c.kind),
    ).toEqual(['confirmed', 'confirmed', 'confirmed', 'confirmed', 'confirmed']);
    expect(check('ImagePullBackOff').map((c) => c.kind)).toEqual(['unknown']);
    expect(check('last state OOMKilled', ['worker-1']).map((c) => c.kind)).toEqual(['unknown']);
    // A restart count a little off is a count that moved on, not a contradiction.
    expect(check('15 restarts').map((c) => c.kind)).toEqual(['unknown']);
    expect(check('40 restarts').map((c) => c.kind)).toEqual(['contradicted']);
  });
});
