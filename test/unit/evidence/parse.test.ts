import { beforeAll, describe, expect, it } from 'vitest';
import { parseKubectl } from '../../../src/kubectl/parse.js';
import { parseDescribePods } from '../../../src/evidence/parse/describe-pod.js';
import { parseEventTable } from '../../../src/evidence/parse/events.js';
import { parseTables } from '../../../src/evidence/parse/get-table.js';
import { parseOutput } from '../../../src/evidence/parse/index.js';
import { parseObjects } from '../../../src/evidence/parse/yaml-json.js';
import { callOf, readShopRecording, type ShopRecording } from '../../support/kube-objects/record.js';

// The field parsers on what Debian's kubectl 1.32 printed for the `shop` objects (recorded by
// test/support/kube-objects/record.ts, kept current by test/integration/evidence/kubectl-output.test.ts).

let shop: ShopRecording;
beforeAll(async () => {
  shop = await readShopRecording();
});
const out = (name: string) => callOf(shop, name).stdout;
const parsed = (name: string) => parseOutput(parseKubectl(callOf(shop, name).argv), out(name));

describe('describe pod', () => {
  it("reads each container's state, last state, reason, exit code, restart count, limits and requests", () => {
    const [api] = parseDescribePods(out('describe-api'));
    expect(api).toMatchObject({ name: 'api-7d9f-x2k9q', namespace: 'shop', phase: 'Running' });
    expect(api?.containers).toEqual([
      {
        name: 'api',
        image: 'registry.example/shop/api:2.3.1',
        state: 'Waiting',
        reason: 'CrashLoopBackOff',
        lastState: 'Terminated',
        lastReason: 'Error',
        lastExitCode: 1,
        ready: false,
        restartCount: 14,
        limits: { cpu: '500m', memory: '256Mi' },
        requests: { cpu: '100m', memory: '128Mi' },
      },
    ]);
    expect(api?.events.map((e) => [e.type, e.reason])).toEqual([
      ['Normal', 'Pulled'],
      ['Warning', 'BackOff'],
    ]);
    expect(api?.events[1]?.message).toBe(
      'Back-off restarting failed container api in pod api-7d9f-x2k9q_shop(api-7d9f-x2k9q-uid)',
    );
  });

  it('reads the old OOMKilled of a running container, and both containers of a two-container pod', () => {
    const [worker] = parseDescribePods(out('describe-worker'));
    expect(worker?.containers[0]).toMatchObject({
      state: 'Running',
      lastState: 'Terminated',
      lastReason: 'OOMKilled',
      lastExitCode: 137,
      restartCount: 1,
      limits: { cpu: '1', memory: '512Mi' },
    });
    expect(worker?.events).toEqual([]);
    const [web] = parseDescribePods(out('describe-web'));
    expect(web?.containers.map((c) => [c.name, c.image, c.state])).toEqual([
      ['web', 'nginx:1.25.3', 'Running'],
      ['log-shipper', 'fluent/fluent-bit:2.2.0', 'Running'],
    ]);
    expect(web?.events[0]).toMatchObject({ type: 'Warning', reason: 'Unhealthy' });
  });

  it('splits `describe pods` into one pod each, with its own events', () => {
    const pods = parseDescribePods(out('describe-pods'));
    expect(pods.map((p) => [p.name, p.events.length])).toEqual([
      ['api-7d9f-x2k9q', 2],
      ['worker-5c8d9-q7m2p', 0],
      ['web-6b7c8-zx9lk', 1],
    ]);
  });
});

describe('get tables', () => {
  it('reads the columns of get pods, -o wide and -A, RESTARTS with its "(2m ago)"', () => {
    const [table] = parseTables(out('get-pods'));
    expect(table?.columns).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    expect(table?.rows[0]).toMatchObject({
      NAME: 'api-7d9f-x2k9q',
      STATUS: 'CrashLoopBackOff',
      RESTARTS: '14 (2m ago)',
    });
    expect(parseTables(out('get-pods-wide'))[0]?.columns).toContain('NOMINATED NODE');
    expect(parsed('get-pods-all').pods.map((p) => [p.namespace, p.name, p.status, p.restarts])).toEqual([
      ['shop', 'api-7d9f-x2k9q', 'CrashLoopBackOff', 14],
      ['shop', 'worker-5c8d9-q7m2p', 'Running', 1],
      ['shop', 'web-6b7c8-zx9lk', 'Running', 0],
    ]);
  });

  it('reads events from get events (and -o wide) and kubectl events: object, reason, message', () => {
    for (const name of ['get-events', 'get-events-wide', 'events']) {
      const events = parseEventTable(out(name));
      expect(events, name).toHaveLength(3);
      expect(
        events.find((e) => e.reason === 'BackOff'),
        name,
      ).toMatchObject({
        object: expect.stringMatching(/^pod\/api-7d9f-x2k9q$/i),
        type: 'Warning',
        message: 'Back-off restarting failed container api in pod api-7d9f-x2k9q_shop(api-7d9f-x2k9q-uid)',
      });
    }
    expect(parsed('events').events).toHaveLength(3);
  });
});

describe('-o yaml and -o json', () => {
  it('read the same container fields as describe, from a pod and from a list', () => {
    const fromDescribe = parseDescribePods(out('describe-api'))[0]?.containers[0];
    for (const name of ['yaml-api', 'json-api']) {
      const [pod] = parseObjects(out(name)).pods;
      expect(pod?.containers[0], name).toEqual(fromDescribe);
    }
    expect(parseObjects(out('yaml-worker')).pods[0]?.containers[0]).toMatchObject({
      lastReason: 'OOMKilled',
      lastExitCode: 137,
      limits: { memory: '512Mi' },
    });
    expect(parsed('json-pods').pods.map((p) => p.name)).toEqual([
      'api-7d9f-x2k9q',
      'worker-5c8d9-q7m2p',
      'web-6b7c8-zx9lk',
    ]);
  });

  it('has no fields for output it cannot read (logs, an error, nothing)', () => {
    expect(parsed('logs-api-previous')).toEqual({ pods: [], events: [] });
    expect(parseObjects('{not: [json')).toEqual({ pods: [], events: [] });
    expect(parsed('get-pod-missing')).toEqual({ pods: [], events: [] });
  });
});
