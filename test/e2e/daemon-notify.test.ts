// The daemon delivers a finished incident to a signed webhook exactly once, also when it is SIGKILLed
// after the incident finished and before the receiver answered: the restart delivers it (the receiver
// sees one idempotency key), never a second message.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  startCliDaemon,
  dropIncident,
  until,
  waitForFinalRun,
  type CliDaemon,
} from '../support/cli-daemon.js';
import { incidentJson } from '../support/incidents.js';
import { entriesBySink } from '../support/notify.js';
import { tempDir, REPO_ROOT } from '../support/runs.js';

const SECRET = 'webhook-signing-secret-for-tests-42';
const AGENT = path.join(REPO_ROOT, 'test/fixtures/agents/claude-like-agent.sh');

interface Received {
  key: string;
  verified: boolean;
  incidentId: string;
}

/** A webhook receiver: verifies the signature, records deliveries, answers (or holds the answer). */
async function receiver(): Promise<{
  url: string;
  got: Received[];
  hold: (on: boolean) => void;
  close: () => Promise<void>;
}> {
  const got: Received[] = [];
  let holding = false;
  const held: (() => void)[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const ts = String(req.headers['x-triage-runner-timestamp']);
      const sig = String(req.headers['x-triage-runner-signature']);
      const want = `v1=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`;
      const payload = JSON.parse(body) as { incident?: { incidentId?: string } };
      got.push({
        key: String(req.headers['idempotency-key']),
        verified: sig.split(/[ ,]/).includes(want) || sig === want,
        incidentId: payload.incident?.incidentId ?? '',
      });
      const answer = () => res.writeHead(200).end('ok');
      if (holding) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    hold: (on) => {
      holding = on;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('the daemon notifies sinks of finished incidents', () => {
  let dir: { dir: string; cleanup: () => Promise<void> };
  let daemons: CliDaemon[] = [];
  beforeEach(async () => {
    dir = await tempDir('triage-notify-e2e-');
  });
  afterEach(async () => {
    await Promise.all(daemons.map((d) => d.stop()));
    daemons = [];
    await dir.cleanup();
  });

  it('delivers once, signed; a daemon killed before the receiver answered delivers it at the next start, not twice', async () => {
    const hook = await receiver();
    try {
      const root = path.join(dir.dir, 'incidents');
      const config = {
        workspaces_root: root,
        engine: 'process',
        agent: { name: 'claude', command: AGENT, min_report_bytes: 10 },
        secrets: { WEBHOOK_SECRET: { env: 'WEBHOOK_SECRET' } },
        notify: {
          sinks: [{ name: 'hook', type: 'webhook', url: hook.url, secret: 'WEBHOOK_SECRET' }],
          retry: { base_delay: '200ms', max_delay: '1s' },
          request_timeout: '60s',
        },
      };
      const env = { ...process.env, WEBHOOK_SECRET: SECRET };
      const start = async () => {
        const d = await startCliDaemon({ dir: dir.dir, config, args: [], env });
        daemons.push(d);
        return d;
      };
      const first = await start();
      const a = path.join(root, 'a');
      await dropIncident(a, incidentJson({ incidentId: 'notify-a' }));
      await waitForFinalRun(a, 60_000, first.tail);
      await until(
        'the first delivery',
        30_000,
        async () => (hook.got.length >= 1 ? true : undefined),
        first.tail,
      );
      expect(hook.got).toEqual([{ key: expect.any(String), verified: true, incidentId: 'notify-a' }]);

      // The receiver takes the next message but does not answer; the daemon dies meanwhile.
      hook.hold(true);
      const b = path.join(root, 'b');
      await dropIncident(b, incidentJson({ incidentId: 'notify-b' }));
      await waitForFinalRun(b, 60_000, first.tail);
      await until(
        'the held delivery',
        30_000,
        async () => (hook.got.length >= 2 ? true : undefined),
        first.tail,
      );
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
      hook.hold(false);

      const second = await start();
      await until(
        'the delivery after the restart',
        60_000,
        async () => (hook.got.filter((g) => g.incidentId === 'notify-b').length >= 2 ? true : undefined),
        second.tail,
      );
      // Once the outbox records the delivery, no send can start (each attempt re-reads the entry under
      // its lock): a duplicate would have arrived by then.
      await until(
        'the delivery to be recorded',
        30_000,
        async () => ((await entriesBySink(b)).hook?.status === 'delivered' ? true : undefined),
        second.tail,
      );
      const forB = hook.got.filter((g) => g.incidentId === 'notify-b');
      // Sent again after the crash (the first attempt was never answered), with the same key: one message.
      expect(new Set(forB.map((g) => g.key)).size).toBe(1);
      expect(forB.every((g) => g.verified)).toBe(true);
      expect(hook.got.filter((g) => g.incidentId === 'notify-a')).toHaveLength(1);
    } finally {
      await hook.close();
    }
  }, 240_000);
});
