// HTTP intake on its own: the daemon's intake routes and store over `root` (no watcher, no runs), on a
// free loopback port with bearer `token`, rate limit off. Used by the SIGKILL test's server process
// and by bench/alerts.ts; `routes` replaces the intake routes (the bench's bare baseline).
import { configSchema } from '../../../src/config/schema.js';
import { readOnlyHooks } from '../../../src/intake/webhooks/hooks.js';
import { startHttpServer } from '../../../src/server/http.js';
import { type HttpServer } from '../../../src/server/types.js';
import { createIntakeRoutes } from '../../../src/server/routes/intake.js';
import type { RouteModule } from '../../../src/server/types.js';

export async function startIntakeOnly(
  root: string,
  token: string,
  options: { daemonId: string; routes?: RouteModule[] },
): Promise<HttpServer> {
  const config = configSchema.parse({ workspaces_root: root, http: { rate_limit: { max: 0 } } });
  return startHttpServer({
    port: 0,
    host: '127.0.0.1',
    token,
    readiness: async () => ({ ok: true, checks: [] }),
    metrics: { render: async () => '', contentType: 'text/plain' },
    routes: options.routes ?? [
      createIntakeRoutes({
        config,
        secrets: {},
        hooks: readOnlyHooks(),
        identity: { daemonId: options.daemonId },
      }),
    ],
    limits: { rateLimitMax: 0, bodyBytes: config.http.body_limit, jsonDepth: config.http.json_depth },
  });
}
