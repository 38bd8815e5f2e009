import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import type { Config } from '../../config/schema.js';
import { TransientError } from '../../util/errors.js';
import type { EngineFlavor } from './hardening.js';

// The connection to the engine: where it is (docker.host, DOCKER_HOST, the default sockets), the
// dockerode client (loaded with the first run), every short call bounded in time, and the engine's
// errors turned into ones that say what to do.

export const DOCKER_SOCKET = '/var/run/docker.sock';
export const PODMAN_SOCKET = '/run/podman/podman.sock';
const API_TIMEOUT_MS = 120_000;
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EPIPE',
]);

/**
 * The engine address: `docker.host`, else DOCKER_HOST, else Docker's default socket if present, else
 * Podman's rootful then rootless socket if present, else Docker's default.
 */
export function dockerEndpoint(
  config: Pick<Config, 'docker'>,
  env: Record<string, string | undefined>,
  exists: (file: string) => boolean = existsSync,
): string {
  if (config.docker.host) return config.docker.host;
  if (env.DOCKER_HOST) return env.DOCKER_HOST;
  const candidates = [DOCKER_SOCKET, PODMAN_SOCKET];
  if (env.XDG_RUNTIME_DIR) candidates.push(path.join(env.XDG_RUNTIME_DIR, 'podman', 'podman.sock'));
  const found = candidates.find((s) => exists(s));
  return `unix://${found ?? DOCKER_SOCKET}`;
}

/** A dockerode client for a DOCKER_HOST-style address (unix://, tcp:// with DOCKER_TLS_VERIFY, ssh://). */
export function dockerClient(
  endpoint: string,
  env: Record<string, string | undefined>,
  DockerClass: typeof Docker,
): Docker {
  if (endpoint.startsWith('unix://'))
    return new DockerClass({ socketPath: endpoint.slice('unix://'.length) });
  if (endpoint.startsWith('/')) return new DockerClass({ socketPath: endpoint });
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(
      `docker endpoint ${endpoint} is not a URL; expected unix:///path, tcp://host:port or ssh://user@host`,
    );
  }
  if (url.protocol === 'ssh:') {
    return new DockerClass({
      protocol: 'ssh',
      host: url.hostname,
      port: url.port || 22,
      username: url.username,
    });
  }
  if (url.protocol === 'tcp:' || url.protocol === 'http:' || url.protocol === 'https:') {
    const tls = url.protocol === 'https:' || (!!env.DOCKER_TLS_VERIFY && env.DOCKER_TLS_VERIFY !== '0');
    const certDir = env.DOCKER_CERT_PATH;
    return new DockerClass({
      protocol: tls ? 'https' : 'http',
      host: url.hostname,
      port: url.port || (tls ? 2376 : 2375),
      ...(tls && certDir
        ? {
            ca: readFileSync(path.join(certDir, 'ca.pem')),
            cert: readFileSync(path.join(certDir, 'cert.pem')),
            key: readFileSync(path.join(certDir, 'key.pem')),
          }
        : {}),
    });
  }
  throw new Error(`unsupported docker endpoint ${endpoint}: expected unix://, tcp:// or ssh://`);
}

export interface ConnectionOptions {
  env?: Record<string, string | undefined>;
  /** Replaced in tests; answers whether a socket path exists. */
  exists?: (file: string) => boolean;
  /** Limit for each short API call (create, attach, start, kill, remove, list, inspect). */
  apiTimeoutMs?: number;
}

/** One engine endpoint, as the engine's operations use it. */
export interface DockerConnection {
  endpoint: string;
  /** DOCKER_TLS_VERIFY is on: the light socket GETs do not apply. */
  tls: boolean;
  apiMs: number;
  /** The dockerode client, loaded on first use (with ssh2): an idle daemon stays small. */
  api(): Promise<Docker>;
  /** Bounds one short API call: a hung engine turns into a TransientError naming the call. */
  timed<T>(action: string, call: Promise<T>): Promise<T>;
  /** Connection failures become TransientErrors naming the endpoint; everything else passes through. */
  translate(err: unknown, action: string): Error;
  /** Docker or Podman (asked once, again after a failure). */
  flavor(): Promise<EngineFlavor>;
}

export function dockerConnection(
  config: Pick<Config, 'docker'>,
  options: ConnectionOptions = {},
): DockerConnection {
  const env = options.env ?? process.env;
  const endpoint = dockerEndpoint(config, env, options.exists);
  const apiMs = options.apiTimeoutMs ?? API_TIMEOUT_MS;
  let client: Promise<Docker> | undefined;
  let flavor: Promise<EngineFlavor> | undefined;
  const conn: DockerConnection = {
    endpoint,
    tls: !!env.DOCKER_TLS_VERIFY && env.DOCKER_TLS_VERIFY !== '0',
    apiMs,
    api: () => (client ??= import('dockerode').then((m) => dockerClient(endpoint, env, m.default))),
    timed: (action, call) => {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(apiTimeout(endpoint, action, apiMs)), apiMs);
      });
      return Promise.race([call, limit]).finally(() => clearTimeout(timer));
    },
    translate: (err, action) => translateEngineError(endpoint, err, action),
    flavor: () =>
      (flavor ??= conn
        .timed(
          'read the engine version',
          conn.api().then((d) => d.version()),
        )
        .then(
          (v) => (v.Components?.some((c) => /podman/i.test(c.Name)) ? 'podman' : 'docker'),
          (err: unknown) => {
            flavor = undefined;
            throw conn.translate(err, 'read the engine version');
          },
        )),
  };
  return conn;
}

/** Raised when one API call gets no answer in time: the engine is overloaded or hung, worth a retry. */
function apiTimeout(endpoint: string, action: string, ms: number): TransientError {
  return new TransientError(
    `container engine at ${endpoint} did not answer within ${ms} ms while trying to ${action}; check the engine's health (docker info / podman info)`,
    { code: 'ETIMEDOUT' },
  );
}

function translateEngineError(endpoint: string, err: unknown, action: string): Error {
  // Already ours (an API call past its deadline): it names the call and the milliseconds.
  if (err instanceof TransientError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (CONNECTION_CODES.has(code)) {
    return new TransientError(
      `container engine unreachable at ${endpoint} while trying to ${action} (${code}): start Docker, or ` +
        `Podman's API service (\`podman system service --time=0 unix://${PODMAN_SOCKET}\`), or point docker.host / DOCKER_HOST at a running engine`,
      { cause: err, code },
    );
  }
  if (code === 'EACCES') {
    return new Error(
      `permission denied on the container engine socket ${endpoint} while trying to ${action}: run the daemon as a user allowed to use it`,
      { cause: err },
    );
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** The HTTP status of a dockerode error (or of httpError's). */
export const statusOf = (err: unknown): number | undefined =>
  (err as { statusCode?: number } | undefined)?.statusCode;
