import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { resolveSecrets } from '../config/secrets.js';
import { ApiError, daemonBaseUrl, probeDaemon, type ApiListBody, type DaemonApi } from '../status/client.js';
import type { CliIO } from './io.js';

// Whether a daemon serving this workspaces root answers on the configured HTTP address: `status` and
// `retry` then ask it (its index is current, and it starts a retried run at once); otherwise they read
// and write the workspaces themselves.

const same = async (a: string, b: string): Promise<boolean> => {
  const real = (p: string) => realpath(p).catch(() => path.resolve(p));
  return (await real(a)) === (await real(b));
};

/**
 * The daemon's API and first page when one answers for `root`; undefined when none answers, it serves
 * another root, or it refuses the token (said on stderr: the command goes on without it).
 */
export async function daemonFor(
  io: CliIO,
  config: Config,
  root: string,
  limit?: number,
): Promise<{ api: DaemonApi; first: ApiListBody } | undefined> {
  const base = daemonBaseUrl(config.http);
  if (!base) return undefined;
  const token = resolveSecrets(config, io.env).values.HTTP_TOKEN;
  const api: DaemonApi = { base, ...(token ? { token } : {}) };
  let first: ApiListBody | undefined;
  try {
    first = await probeDaemon(api, limit);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    io.stderr(
      `a daemon answers at ${base} but refused the request (HTTP ${err.status}: ${err.message}); reading the workspaces directly\n`,
    );
    return undefined;
  }
  if (!first || typeof first.root !== 'string' || !(await same(first.root, root))) return undefined;
  return { api, first };
}
