import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Duplex, Readable } from 'node:stream';
import type Docker from 'dockerode';
import { request as httpRequest } from 'node:http';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { TransientError, errorMessage } from '../util/errors.js';
import { RUN_LABELS, WaitTimeoutError, assertNoEngineSocket } from './labels.js';
import type { Engine, RunExit, RunHandle, RunInfo, RunSpec, StopSignal } from './types.js';

// The docker engine: one hardened container per run through the Docker API, which Docker Engine and
// Podman (`podman system service`) both serve. This is the only module that imports dockerode.

const DOCKER_SOCKET = '/var/run/docker.sock';
const PODMAN_SOCKET = '/run/podman/podman.sock';
const PING_TIMEOUT_MS = 5000;
const OUTPUT_DRAIN_MS = 5000;
const API_TIMEOUT_MS = 120_000;
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EPIPE',
]);

export interface DockerEngineOptions {
  env?: Record<string, string | undefined>;
  /** Replaced in tests; answers whether a socket path exists. */
  exists?: (file: string) => boolean;
  /** Limit for each short API call (create, attach, start, kill, remove, list, inspect). */
  apiTimeoutMs?: number;
}

/** Raised when one API call gets no answer in time: the engine is overloaded or hung, worth a retry. */
function apiTimeout(endpoint: string, action: string, ms: number): TransientError {
  return new TransientError(
    `container engine at ${endpoint} did not answer within ${ms} ms while trying to ${action}; check the engine's health (docker info / podman info)`,
    { code: 'ETIMEDOUT' },
  );
}

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

/** Refuses an empty user and root (`0`, `root`, `0:…`, `root:…`): agents never run as root. */
export function assertNonRootUser(user: string): string {
  const name = user.split(':')[0]?.trim() ?? '';
  if (name === '') throw new Error('docker.user is empty; set it to a non-root uid:gid such as 1000:1000');
  // The engine reads "00" or "+0" as uid 0 too.
  if (name === 'root' || (/^[+]?\d+$/.test(name) && Number(name) === 0)) {
    throw new Error(
      `docker.user is ${JSON.stringify(user)}, which is root; agent containers never run as root ` +
        '(Claude refuses unattended mode as root, and root widens what a compromised agent can do): set docker.user to a non-root uid:gid such as 1000:1000',
    );
  }
  return user;
}

/** Secret values shorter than this are not scrubbed from error text (they would mangle it). */
const MIN_SCRUB_LENGTH = 4;

/**
 * `err` with every secret value replaced by `[REDACTED]`: an engine error may echo the create request,
 * whose Env carries the API keys, and error text ends up in logs, result.json and state.json. The raw
 * cause is replaced by a scrubbed copy; transient-ness, code and HTTP status are kept.
 */
export function scrubSecrets(err: Error, secretEnv: Record<string, string>): Error {
  const values = Object.values(secretEnv)
    .filter((v) => v.length >= MIN_SCRUB_LENGTH)
    .sort((a, b) => b.length - a.length);
  if (values.length === 0) return err;
  const scrub = (text: string) => values.reduce((t, v) => t.split(v).join('[REDACTED]'), text);
  const cause = err.cause as (Error & { statusCode?: number; json?: unknown }) | undefined;
  const texts = [err.message, err.stack ?? '', cause === undefined ? '' : errorMessage(cause)];
  for (const e of [err as { json?: unknown }, cause]) {
    if (e?.json !== undefined) texts.push(typeof e.json === 'string' ? e.json : JSON.stringify(e.json));
  }
  if (!texts.some((t) => values.some((v) => t.includes(v)))) return err;
  const cleanCause =
    cause === undefined
      ? undefined
      : Object.assign(new Error(scrub(errorMessage(cause))), {
          ...(cause.statusCode !== undefined ? { statusCode: cause.statusCode } : {}),
        });
  const statusCode = (err as { statusCode?: number }).statusCode;
  const clean =
    err instanceof TransientError
      ? new TransientError(scrub(err.message), {
          ...(cleanCause ? { cause: cleanCause } : {}),
          ...(err.code ? { code: err.code } : {}),
        })
      : new Error(scrub(err.message), cleanCause ? { cause: cleanCause } : undefined);
  if (statusCode !== undefined) Object.assign(clean, { statusCode });
  return clean;
}

/** HostConfig of an agent container: every hardening (docs/architecture.md), on by default. */
export type EngineFlavor = 'docker' | 'podman';

/**
 * Options of a writable tmpfs owned by the agent's user. Podman ignores `mode` on an image folder and
 * rejects `uid=`, but chowns to the container user with `U`; Docker takes `uid=`/`gid=`.
 */
export function tmpfsOptions(flavor: EngineFlavor, user: string, size: number): string {
  const base = `rw,nosuid,nodev,size=${size}`;
  if (flavor === 'podman') return `${base},U`;
  const [uid, gid] = user.split(':');
  const owner = uid && /^\d+$/.test(uid) ? `,uid=${uid}${gid && /^\d+$/.test(gid) ? `,gid=${gid}` : ''}` : '';
  return `${base},mode=${owner ? '0755' : '1777'}${owner}`;
}

/** Docker's own minimum memory limit; 0 would mean "no limit". */
const MIN_MEMORY_BYTES = 6 * 1024 * 1024;

/** Refuses limits the engine reads as "unlimited" (memory 0, tmpfs size 0): hardening is never silently off. */
function assertLimits(docker: Config['docker']): void {
  if (!(docker.memory >= MIN_MEMORY_BYTES)) {
    throw new Error(
      `docker.memory is ${docker.memory} bytes, which the engine reads as no limit or refuses; set it to at least ${MIN_MEMORY_BYTES} bytes (6m), e.g. 2g`,
    );
  }
  if (!(docker.tmpfs_size > 0)) {
    throw new Error(
      `docker.tmpfs_size is ${docker.tmpfs_size} bytes, which the engine reads as an unbounded tmpfs; set a size such as 256m`,
    );
  }
}

export function hardenedHostConfig(
  config: Pick<Config, 'docker'>,
  spec: Pick<RunSpec, 'mounts' | 'tmpfs'>,
  flavor: EngineFlavor = 'docker',
): Docker.HostConfig {
  assertLimits(config.docker);
  assertNoEngineSocket(spec.mounts);
  const binds = spec.mounts.map((m) => {
    for (const p of [m.source, m.target]) {
      if (p.includes(':') || p.includes(',')) {
        throw new Error(
          `mount path ${JSON.stringify(p)} contains ":" or ","; rename the folder (bind specs cannot carry them)`,
        );
      }
    }
    return `${m.source}:${m.target}:${m.readOnly ? 'ro' : 'rw'}`;
  });
  const tmpfs: Record<string, string> = {};
  for (const dir of spec.tmpfs)
    tmpfs[dir] = tmpfsOptions(flavor, config.docker.user, config.docker.tmpfs_size);
  return {
    Binds: binds,
    Tmpfs: tmpfs,
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    // Docker accepts `no-new-privileges` and `no-new-privileges:true`; Podman's Docker API accepts the bare form.
    SecurityOpt: ['no-new-privileges'],
    Memory: config.docker.memory,
    MemorySwap: config.docker.memory,
    NanoCpus: Math.round(config.docker.cpus * 1e9),
    PidsLimit: config.docker.pids,
    NetworkMode: config.docker.network,
    // The engine's init (docker-init / catatonit) is PID 1: it forwards SIGINT/SIGTERM to the agent
    // CLI, which as PID 1 itself would ignore every signal it has no handler for, and reaps its children.
    Init: true,
    AutoRemove: false,
  };
}

/**
 * A GET on the engine's API without dockerode, for what an idle daemon asks (ping, image present, the
 * start-up sweep's listing): unix sockets and plain http. Undefined for other endpoints (ssh, TLS), which
 * go through dockerode. Rejects with the socket error, or an AbortError after `timeoutMs`.
 */
export async function lightGet(
  endpoint: string,
  pathname: string,
  timeoutMs: number,
  tls: boolean,
): Promise<{ status: number; body: string } | undefined> {
  let target: { socketPath: string } | { host: string; port: number } | undefined;
  if (endpoint.startsWith('unix://')) target = { socketPath: endpoint.slice('unix://'.length) };
  else if (endpoint.startsWith('/')) target = { socketPath: endpoint };
  else if (!tls && /^(tcp|http):\/\//.test(endpoint)) {
    const url = new URL(endpoint.replace(/^tcp:/, 'http:'));
    target = { host: url.hostname, port: Number(url.port || 2375) };
  }
  if (!target) return undefined;
  const where = target;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { ...where, path: pathname, method: 'GET', signal: AbortSignal.timeout(timeoutMs) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** An error carrying the HTTP status, as dockerode's are. */
const httpError = (status: number, body: string): Error =>
  Object.assign(new Error(`HTTP ${status}: ${body.slice(0, 200)}`), { statusCode: status });

interface Tracked {
  /** Resolves once the output stream of the container has ended. */
  output: Promise<void>;
}

type DialFn = (opts: Record<string, unknown>, cb: (err: Error | null, stream: Duplex) => void) => void;

export function createDockerEngine(config: Config, log: Logger, options: DockerEngineOptions = {}): Engine {
  const env = options.env ?? process.env;
  const endpoint = dockerEndpoint(config, env, options.exists);
  // dockerode (with ssh2) is loaded with the first run, not for health checks: an idle daemon stays small.
  let client: Promise<Docker> | undefined;
  const tls = !!env.DOCKER_TLS_VERIFY && env.DOCKER_TLS_VERIFY !== '0';
  const api = (): Promise<Docker> =>
    (client ??= import('dockerode').then((m) => dockerClient(endpoint, env, m.default)));
  const tracked = new Map<string, Tracked>();
  const apiMs = options.apiTimeoutMs ?? API_TIMEOUT_MS;
  /** Every short API call is bounded: a hung engine turns into a TransientError naming the call. */
  const timed = <T>(action: string, call: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(apiTimeout(endpoint, action, apiMs)), apiMs);
    });
    return Promise.race([call, limit]).finally(() => clearTimeout(timer));
  };
  let flavor: Promise<EngineFlavor> | undefined;
  const engineFlavor = (): Promise<EngineFlavor> => {
    flavor ??= timed(
      'read the engine version',
      api().then((d) => d.version()),
    ).then(
      (v) => (v.Components?.some((c) => /podman/i.test(c.Name)) ? 'podman' : 'docker'),
      (err: unknown) => {
        flavor = undefined;
        throw translate(err, 'read the engine version');
      },
    );
    return flavor;
  };

  /** Connection failures become TransientErrors naming the endpoint; everything else passes through. */
  const translate = (err: unknown, action: string): Error => {
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
  };

  const statusOf = (err: unknown): number | undefined =>
    (err as { statusCode?: number } | undefined)?.statusCode;

  /**
   * Attaches stdin/stdout/stderr before start. dockerode's `attach` sends its options as a JSON request
   * body, which Podman hands to the container as the first bytes of stdin; dialling with an empty
   * body keeps stdin byte-identical on both engines. The upgraded socket is a raw duplex: writing and
   * then ending it delivers stdin and EOF (StdinOnce closes the container's stdin after that).
   */
  const attachHijacked = (docker: Docker, id: string): Promise<Duplex> =>
    new Promise((resolve, reject) => {
      const dial = (docker.modem as unknown as { dial: DialFn }).dial.bind(docker.modem);
      dial(
        {
          path: `/containers/${id}/attach?`,
          method: 'POST',
          isStream: true,
          hijack: true,
          openStdin: false,
          file: Buffer.alloc(0),
          statusCodes: { 200: true, 101: true, 404: 'no such container', 500: 'server error' },
          options: { stream: true, stdin: true, stdout: true, stderr: true },
        },
        (err, stream) => (err ? reject(err) : resolve(stream)),
      );
    });

  const demux = (
    docker: Docker,
    stream: Readable,
    onStdout: (c: Buffer) => void,
    onStderr: (c: Buffer) => void,
  ): Promise<void> => {
    const sink = (fn: (c: Buffer) => void) =>
      ({ write: (c: Buffer) => (fn(c), true) }) as unknown as NodeJS.WritableStream;
    docker.modem.demuxStream(stream, sink(onStdout), sink(onStderr));
    return new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', (err) => {
        log.debug({ err: errorMessage(err) }, 'container output stream error');
        resolve();
      });
    });
  };

  /** Creates, attaches and starts the container; on any failure after create, removes it. */
  const startRun = async (spec: RunSpec): Promise<RunHandle> => {
    const user = assertNonRootUser(config.docker.user);
    const docker = await api();
    const hostConfig = hardenedHostConfig(config, spec, await engineFlavor());
    const envList = Object.entries({ ...spec.env, ...spec.secretEnv }).map(([k, v]) => `${k}=${v}`);
    let container: Docker.Container;
    let creating: Promise<Docker.Container> | undefined;
    try {
      container = await timed(
        `create the container for run ${spec.runId}`,
        (creating = docker.createContainer({
          name: `triage-runner-${spec.runId}`.replace(/[^a-zA-Z0-9_.-]/g, '-'),
          Image: spec.image,
          Entrypoint: [spec.command],
          Cmd: spec.args,
          WorkingDir: spec.workdir,
          User: user,
          Env: envList,
          Labels: spec.labels,
          Tty: false,
          OpenStdin: true,
          StdinOnce: true,
          AttachStdin: true,
          AttachStdout: true,
          AttachStderr: true,
          HostConfig: hostConfig,
        })),
      );
    } catch (err) {
      // A create answered after our deadline would leave a container nobody tracks: remove it once it exists.
      void creating?.then((c) => c.remove({ force: true, v: true })).catch(() => undefined);
      if (statusOf(err) === 404) {
        throw new Error(
          `agent image ${spec.image} not found on the container engine at ${endpoint}: build it in a triage-runner checkout with ` +
            `\`docker build -t ${spec.image} runners/\` (or \`podman build -t ${spec.image} runners/\`; without registry access ` +
            `\`IMAGE=${spec.image} bash .ci/build-agent-image.sh\`; Goose is opt-in, see runners/README.md), or set agent.image to an image the engine has`,
          { cause: err },
        );
      }
      throw translate(err, `create the container for run ${spec.runId}`);
    }
    const handle: RunHandle = { engine: 'docker', id: container.id, runId: spec.runId };
    let stream: Duplex | undefined;
    try {
      stream = await timed(`attach to container ${container.id}`, attachHijacked(docker, container.id));
      const output = demux(docker, stream, spec.onStdout, spec.onStderr);
      tracked.set(container.id, { output });
      await timed(`start container ${container.id}`, container.start());
      stream.on('error', (err) =>
        log.debug({ err: errorMessage(err), runId: spec.runId }, 'stdin write failed'),
      );
      // Written at once, then closed: Claude and Gemini only wait a moment for piped stdin.
      stream.end(Buffer.from(spec.stdin, 'utf8'));
    } catch (err) {
      // Closing stdin unsent: should a start we gave up on happen after all, the agent gets no prompt.
      stream?.destroy();
      await engine
        .remove(handle)
        .catch((removeErr: unknown) =>
          log.warn(
            { err: errorMessage(removeErr), containerId: container.id, runId: spec.runId },
            'could not remove the container of a failed start; the start-up sweep removes it once it has ended',
          ),
        );
      throw translate(err, `start the container for run ${spec.runId}`);
    }
    log.debug({ runId: spec.runId, containerId: container.id, image: spec.image }, 'container started');
    return handle;
  };

  const runInfo = (c: Docker.ContainerInfo): RunInfo => ({
    handle: { engine: 'docker', id: c.Id, runId: c.Labels[RUN_LABELS.run] ?? '' },
    labels: c.Labels,
    running: c.State === 'running',
    // A container the daemon created but never started (it died in between) never ran an agent.
    started: c.State !== 'created',
    ...(Number.isFinite(c.Created) ? { createdAt: new Date(c.Created * 1000) } : {}),
  });

  const engine: Engine = {
    name: 'docker',
    placement: 'container',
    // Podman does not report OOMKilled; Docker does (supervision falls back to naming a likely cause).
    capabilities: {
      reattachOutput: true,
      reportsOom: true,
      signals: ['SIGINT', 'SIGTERM', 'SIGKILL'],
      bundleSockets: true,
      // Only the host network shares the host's loopback; on a bridge 127.0.0.1 is the container itself.
      hostLoopback: config.docker.network === 'host',
    },

    async ping() {
      try {
        const light = await lightGet(endpoint, '/_ping', PING_TIMEOUT_MS, tls);
        if (light && light.status !== 200) throw httpError(light.status, light.body);
        if (!light) {
          const docker = await api();
          const ping = docker.ping.bind(docker) as unknown as (o: {
            abortSignal: AbortSignal;
          }) => Promise<unknown>;
          await ping({ abortSignal: AbortSignal.timeout(PING_TIMEOUT_MS) });
        }
      } catch (err) {
        const name = (err as Error | undefined)?.name;
        if (name === 'AbortError' || name === 'TimeoutError') {
          throw new TransientError(
            `container engine at ${endpoint} did not answer ping within ${PING_TIMEOUT_MS} ms: check that Docker or Podman's API service is running`,
            { cause: err, code: 'ETIMEDOUT' },
          );
        }
        const translated = translate(err, 'ping');
        if (translated instanceof TransientError) throw translated;
        throw new TransientError(`container engine at ${endpoint} failed ping: ${errorMessage(err)}`, {
          cause: err,
        });
      }
    },

    async start(spec) {
      try {
        return await startRun(spec);
      } catch (err) {
        throw scrubSecrets(err instanceof Error ? err : new Error(String(err)), spec.secretEnv);
      }
    },

    async wait(handle, timeoutMs) {
      const container = (await api()).getContainer(handle.id);
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          abort.abort();
          reject(new WaitTimeoutError(handle.id, timeoutMs));
        }, timeoutMs);
      });
      let status: { StatusCode?: number };
      try {
        status = (await Promise.race([container.wait({ abortSignal: abort.signal }), timeout])) as {
          StatusCode?: number;
        };
      } catch (err) {
        if (err instanceof WaitTimeoutError) throw err;
        if (statusOf(err) === 404)
          return {
            exitCode: null,
            signal: null,
            oomKilled: false,
            error: `container ${handle.id} no longer exists`,
          };
        throw translate(err, `wait for container ${handle.id}`);
      } finally {
        clearTimeout(timer);
      }
      const output = tracked.get(handle.id)?.output;
      if (output) await Promise.race([output, new Promise((r) => setTimeout(r, OUTPUT_DRAIN_MS).unref())]);
      const exit: RunExit = { exitCode: status.StatusCode ?? null, signal: null, oomKilled: false };
      try {
        const info = await timed(`inspect container ${handle.id}`, container.inspect());
        exit.oomKilled = info.State.OOMKilled;
        if (info.State.Error) exit.error = info.State.Error;
        if (exit.exitCode === null) exit.exitCode = info.State.ExitCode;
      } catch (err) {
        log.debug({ err: errorMessage(err), containerId: handle.id }, 'inspect after wait failed');
      }
      return exit;
    },

    async signal(handle, signal: StopSignal) {
      try {
        await timed(
          `send ${signal} to container ${handle.id}`,
          api().then((d) => d.getContainer(handle.id).kill({ signal })),
        );
      } catch (err) {
        // 404: already removed; 409 (Docker) / 500 (Podman): not running. Either way nothing to signal.
        const code = statusOf(err);
        if (code === 404 || code === 409) return;
        const running = await timed(
          `inspect container ${handle.id}`,
          api().then((d) => d.getContainer(handle.id).inspect()),
        ).then(
          (i) => i.State.Running,
          () => false,
        );
        if (!running) return;
        throw translate(err, `send ${signal} to container ${handle.id}`);
      }
    },

    async remove(handle) {
      tracked.delete(handle.id);
      try {
        await timed(
          `remove container ${handle.id}`,
          api().then((d) => d.getContainer(handle.id).remove({ force: true, v: true })),
        );
      } catch (err) {
        const code = statusOf(err);
        if (code === 404) return;
        // Docker answers 409 while a removal is already in progress.
        if (code === 409 && /in progress/i.test(errorMessage(err))) return;
        throw translate(err, `remove container ${handle.id}`);
      }
    },

    async list(labels) {
      let containers: Docker.ContainerInfo[];
      const filters = { label: Object.entries(labels).map(([k, v]) => `${k}=${v}`) };
      try {
        const query = `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify(filters))}`;
        const light = await lightGet(endpoint, query, apiMs, tls);
        if (light && light.status !== 200) throw httpError(light.status, light.body);
        containers = light
          ? (JSON.parse(light.body) as Docker.ContainerInfo[])
          : await timed('list containers', (await api()).listContainers({ all: true, filters }));
      } catch (err) {
        throw translate(err, 'list containers');
      }
      return containers
        .filter((c) => Object.entries(labels).every(([k, v]) => c.Labels[k] === v))
        .map(runInfo);
    },

    async find(runId) {
      return (await engine.list({ [RUN_LABELS.run]: runId }))[0];
    },

    async hasImage(image) {
      try {
        const light = await lightGet(endpoint, `/images/${encodeURIComponent(image)}/json`, apiMs, tls);
        if (light?.status === 404) return false;
        if (light && light.status !== 200) throw httpError(light.status, light.body);
        if (!light) await timed(`inspect image ${image}`, (await api()).getImage(image).inspect());
        return true;
      } catch (err) {
        if (statusOf(err) === 404) return false;
        throw translate(err, `inspect image ${image}`);
      }
    },

    async attach(handle, onStdout, onStderr) {
      // The whole log from the container's start, then follow: an adopting daemon rewrites the run's logs.
      let stream: Readable;
      try {
        stream = (await timed(
          `follow the logs of container ${handle.id}`,
          (await api()).getContainer(handle.id).logs({ follow: true, stdout: true, stderr: true }),
        )) as unknown as Readable;
      } catch (err) {
        throw translate(err, `follow the logs of container ${handle.id}`);
      }
      tracked.set(handle.id, { output: demux(await api(), stream, onStdout, onStderr) });
    },

    async close() {
      tracked.clear();
    },
  };
  return engine;
}
