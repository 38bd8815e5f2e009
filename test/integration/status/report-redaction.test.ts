import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../../src/log/redact.js';
import { startHttpServer } from '../../../src/server/http.js';
import { type HttpServer } from '../../../src/server/types.js';
import { statusApiRoutes } from '../../../src/server/routes/status.js';
import { statusPageRoutes } from '../../../src/server/routes/status-page.js';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import { tempRoot } from '../../support/incidents.js';
import { PLANTED } from '../../support/kube-objects.js';
import { rootWithEveryState } from '../../support/status-root.js';

// The report as the status API and the status page serve it: read from the workspace, where it may not
// be scrubbed yet (the agent is still writing it, or an older daemon left it), and passed through the
// daemon's redaction on the way out, its configured secret values among them.

const DAEMON_KEY = 'sk-ant-daemon-configured-0123456789';

let root: string;
let cleanup: () => Promise<void>;
let server: HttpServer | undefined;
let index: IncidentIndex | undefined;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-report-redact-'));
});
afterEach(async () => {
  await server?.close();
  index?.close();
  await cleanup();
});

describe('reports served over HTTP', () => {
  it('serves a report without the credentials it quotes, on the API and on the status page', async () => {
    const dirs = await rootWithEveryState(root);
    const report = [
      '# Report',
      `The database password is \`${PLANTED.dbPassword}\`; the pod env has STRIPE_SECRET=${PLANTED.stripeKey}.`,
      `The agent printed its own key ${DAEMON_KEY}.`,
      'Roll back the Deployment.',
    ].join('\n');
    await writeFile(path.join(dirs.succeeded, 'output', 'investigation.md'), report);
    index = new IncidentIndex({ root });
    await index.load();
    const redactor = new Redactor({ ANTHROPIC_API_KEY: DAEMON_KEY });
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      readiness: async () => ({ ok: true, checks: [] }),
      metrics: { render: async () => '', contentType: 'text/plain' },
      routes: [statusApiRoutes({ index, redactor }), statusPageRoutes({ index, redactor })],
    });
    const base = `http://127.0.0.1:${server.port}`;
    const api = await (await fetch(`${base}/v1/incidents/succeeded/report`)).text();
    const page = await (await fetch(`${base}/incidents/succeeded`)).text();
    for (const served of [api, page]) {
      for (const secret of [PLANTED.dbPassword, PLANTED.stripeKey, DAEMON_KEY])
        expect(served).not.toContain(secret);
      expect(served).toContain('Roll back the Deployment.');
    }
    expect(api).toContain('The database password is `[REDACTED]`; the pod env has STRIPE_SECRET=[REDACTED].');
    expect(api).toContain('The agent printed its own key [REDACTED:ANTHROPIC_API_KEY].');
  });
});
