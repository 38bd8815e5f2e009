import type { Duplex, Readable } from 'node:stream';
import type Docker from 'dockerode';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { TransientError, errorMessage } from '../../util/errors.js';
import { RUN_LABELS, WaitTimeoutError } from '../labels.js';
import type { Engine, RunExit, RunHandle, RunInfo, RunSpec, StopSignal } from '../types.js';
import { dockerConnection, statusOf, type ConnectionOptions, type DockerConnection } from './client.js';
import { assertNonRootUser, hardenedHostConfig } from './hardening.js';
import { StartGate } from '../start-gate.js';
import { scrubSecrets } from './scrub.js';
import { probeImage, type ProbeCache } from './probe.js';
import { httpError, lightGet } from './socket-http.js';
import { attachHijacked, demux } from './streams.js';

// The docker engine: one hardened container per run through the Docker API (see index.ts for the
// parts). Each operation is a function of the connection; the Engine object only wires them.

const PING_TIMEOUT_MS = 5000;
const OUTPUT_DRAIN_MS = 5000;

export type DockerEngineOptions = ConnectionOptions;

/** What the engine keeps per container it started or attached to. */
interface Shared {
  conn: DockerConnection;
  config: Config;
  log: Logger;
  /** Per container: resolves once its output stream has ended. */
  outputs: Map<string, Promise<void>>;
  /** Answers of one-off probe containers, per image id and command. */
  probes: ProbeCache;
}

export function createDockerEngine(config: Config, log: Logger, options: DockerEngineOptions = {}): Engine {
  const shared: Shared = {
    conn: dockerConnection(config, options),
    config,
    log,
    outputs: new Map(),
    probes: new Map(),
  };
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
      hostAddressHint:
        "set docker.network: host, or point it at an address the container can reach (the host's address on the container network, e.g. http://host.containers.internal:PORT with Podman or http://host.docker.internal:PORT with Docker Desktop), or use engine: process",
    },
    ping: () => ping(shared.conn),
    async start(spec) {
      try {
        return await startRun(shared, spec, (handle) => engine.remove(handle));
      } catch (err) {
        throw scrubSecrets(err instanceof Error ? err : new Error(String(err)), spec.secretEnv);
      }
    },
    wait: (handle, timeoutMs) => waitForExit(shared, handle, timeoutMs),
    signal: (handle, signal) => signalContainer(shared.conn, handle, signal),
    async remove(handle) {
      shared.outputs.delete(handle.id);
      await removeContainer(shared.conn, handle);
    },
    list: (labels) => listRuns(shared.conn, labels),
    async find(runId) {
      return (await engine.list({ [RUN_LABELS.run]: runId }))[0];
    },
    hasImage: (image) => hasImage(shared.conn, image),
    probeImage: (image, argv) => probeImage(shared.conn, shared.config, shared.probes, image, argv),
    attach: (handle, onStdout, onStderr) => followLogs(shared, handle, onStdout, onStderr),
    async close() {
      shared.outputs.clear();
    },
  };
  return engine;
}

async function ping(conn: DockerConnection): Promise<void> {
  const deadline = AbortSignal.timeout(PING_TIMEOUT_MS);
  try {
    const light = await lightGet(conn.endpoint, '/_ping', deadline, conn.tls);
    if (light && light.status !== 200) throw httpError(light.status, light.body);
    if (!light) {
      const docker = await conn.api();
      const call = docker.ping.bind(docker) as unknown as (o: {
        abortSignal: AbortSignal;
      }) => Promise<unknown>;
      await call({ abortSignal: deadline });
    }
  } catch (err) {
    if (deadline.aborted) {
      throw new TransientError(
        `container engine at ${conn.endpoint} did not answer ping within ${PING_TIMEOUT_MS} ms: check that Docker or Podman's API service is running`,
        { cause: err, code: 'ETIMEDOUT' },
      );
    }
    const translated = conn.translate(err, 'ping');
    if (translated instanceof TransientError) throw translated;
    throw new TransientError(`container engine at ${conn.endpoint} failed ping: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

/**
 * Creates, attaches and starts the container; on any failure after create, removes it. The run's
 * `beforeStart` runs meanwhile and is awaited before the start.
 */
async function startRun(
  shared: Shared,
  spec: RunSpec,
  remove: (handle: RunHandle) => Promise<void>,
): Promise<RunHandle> {
  const { conn, log } = shared;
  const gate = new StartGate(spec.beforeStart);
  let docker: Docker;
  let container: Docker.Container;
  try {
    docker = await conn.api();
    container = await createContainer(shared, docker, spec);
  } catch (err) {
    await gate.settled();
    throw err;
  }
  const handle: RunHandle = { engine: 'docker', id: container.id, runId: spec.runId };
  let stream: Duplex | undefined;
  let notReady: { err: unknown } | undefined;
  try {
    stream = await conn.timed(`attach to container ${container.id}`, attachHijacked(docker, container.id));
    shared.outputs.set(container.id, demux(docker, stream, spec.onStdout, spec.onStderr, log));
    notReady = await gate.passed().then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    if (notReady) throw notReady.err;
    await conn.timed(`start container ${container.id}`, container.start());
    stream.on('error', (err) =>
      log.debug({ err: errorMessage(err), runId: spec.runId }, 'stdin write failed'),
    );
    // Written at once, then closed: Claude and Gemini only wait a moment for piped stdin.
    stream.end(Buffer.from(spec.stdin, 'utf8'));
  } catch (err) {
    // Closing stdin unsent: should a start we gave up on happen after all, the agent gets no prompt.
    stream?.destroy();
    await gate.settled();
    await remove(handle).catch((removeErr: unknown) =>
      log.warn(
        { err: errorMessage(removeErr), containerId: container.id, runId: spec.runId },
        'could not remove the container of a failed start; the start-up sweep removes it once it has ended',
      ),
    );
    // beforeStart's failure is the caller's own, not the engine's: it is thrown as it is.
    throw notReady ? err : conn.translate(err, `start the container for run ${spec.runId}`);
  }
  log.debug({ runId: spec.runId, containerId: container.id, image: spec.image }, 'container started');
  return handle;
}

/** The run's container, hardened, with stdin open for the prompt; a missing image says how to build it. */
async function createContainer(shared: Shared, docker: Docker, spec: RunSpec): Promise<Docker.Container> {
  const { conn, config } = shared;
  const user = assertNonRootUser(config.docker.user);
  const hostConfig = hardenedHostConfig(config, spec, await conn.flavor());
  const envList = Object.entries({ ...spec.env, ...spec.secretEnv }).map(([k, v]) => `${k}=${v}`);
  let creating: Promise<Docker.Container> | undefined;
  try {
    return await conn.timed(
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
        `agent image ${spec.image} not found on the container engine at ${conn.endpoint}: build it in a triage-runner checkout with ` +
          `\`docker build -t ${spec.image} runners/\` (or \`podman build -t ${spec.image} runners/\`; without registry access ` +
          `\`IMAGE=${spec.image} bash .ci/build-agent-image.sh\`; Goose is opt-in, see runners/README.md), or set agent.image to an image the engine has`,
        { cause: err },
      );
    }
    throw conn.translate(err, `create the container for run ${spec.runId}`);
  }
}

async function waitForExit(shared: Shared, handle: RunHandle, timeoutMs: number): Promise<RunExit> {
  const { conn, log } = shared;
  const container = (await conn.api()).getContainer(handle.id);
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
    throw conn.translate(err, `wait for container ${handle.id}`);
  } finally {
    clearTimeout(timer);
  }
  const output = shared.outputs.get(handle.id);
  if (output) await Promise.race([output, new Promise((r) => setTimeout(r, OUTPUT_DRAIN_MS).unref())]);
  const exit: RunExit = { exitCode: status.StatusCode ?? null, signal: null, oomKilled: false };
  try {
    const info = await conn.timed(`inspect container ${handle.id}`, container.inspect());
    exit.oomKilled = info.State.OOMKilled;
    if (info.State.Error) exit.error = info.State.Error;
    if (exit.exitCode === null) exit.exitCode = info.State.ExitCode;
  } catch (err) {
    log.debug({ err: errorMessage(err), containerId: handle.id }, 'inspect after wait failed');
  }
  return exit;
}

async function signalContainer(conn: DockerConnection, handle: RunHandle, signal: StopSignal): Promise<void> {
  try {
    await conn.timed(
      `send ${signal} to container ${handle.id}`,
      conn.api().then((d) => d.getContainer(handle.id).kill({ signal })),
    );
  } catch (err) {
    // 404: already removed; 409 (Docker) / 500 (Podman): not running. Either way nothing to signal.
    const code = statusOf(err);
    if (code === 404 || code === 409) return;
    const running = await conn
      .timed(
        `inspect container ${handle.id}`,
        conn.api().then((d) => d.getContainer(handle.id).inspect()),
      )
      .then(
        (i) => i.State.Running,
        () => false,
      );
    if (!running) return;
    throw conn.translate(err, `send ${signal} to container ${handle.id}`);
  }
}

async function removeContainer(conn: DockerConnection, handle: RunHandle): Promise<void> {
  try {
    await conn.timed(
      `remove container ${handle.id}`,
      conn.api().then((d) => d.getContainer(handle.id).remove({ force: true, v: true })),
    );
  } catch (err) {
    const code = statusOf(err);
    if (code === 404) return;
    // Docker answers 409 while a removal is already in progress.
    if (code === 409 && /in progress/i.test(errorMessage(err))) return;
    throw conn.translate(err, `remove container ${handle.id}`);
  }
}

async function listRuns(conn: DockerConnection, labels: Record<string, string>): Promise<RunInfo[]> {
  let containers: Docker.ContainerInfo[];
  const filters = { label: Object.entries(labels).map(([k, v]) => `${k}=${v}`) };
  try {
    const query = `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify(filters))}`;
    const light = await lightGet(conn.endpoint, query, conn.apiMs, conn.tls);
    if (light && light.status !== 200) throw httpError(light.status, light.body);
    containers = light
      ? (JSON.parse(light.body) as Docker.ContainerInfo[])
      : await conn.timed('list containers', (await conn.api()).listContainers({ all: true, filters }));
  } catch (err) {
    throw conn.translate(err, 'list containers');
  }
  return containers.filter((c) => Object.entries(labels).every(([k, v]) => c.Labels[k] === v)).map(runInfo);
}

const runInfo = (c: Docker.ContainerInfo): RunInfo => ({
  handle: { engine: 'docker', id: c.Id, runId: c.Labels[RUN_LABELS.run] ?? '' },
  labels: c.Labels,
  running: c.State === 'running',
  // A container the daemon created but never started (it died in between) never ran an agent.
  started: c.State !== 'created',
  ...(Number.isFinite(c.Created) ? { createdAt: new Date(c.Created * 1000) } : {}),
});

async function hasImage(conn: DockerConnection, image: string): Promise<boolean> {
  try {
    const light = await lightGet(
      conn.endpoint,
      `/images/${encodeURIComponent(image)}/json`,
      conn.apiMs,
      conn.tls,
    );
    if (light?.status === 404) return false;
    if (light && light.status !== 200) throw httpError(light.status, light.body);
    if (!light) await conn.timed(`inspect image ${image}`, (await conn.api()).getImage(image).inspect());
    return true;
  } catch (err) {
    if (statusOf(err) === 404) return false;
    throw conn.translate(err, `inspect image ${image}`);
  }
}

/** The whole log from the container's start, then follow: an adopting daemon rewrites the run's logs. */
async function followLogs(
  shared: Shared,
  handle: RunHandle,
  onStdout: (c: Buffer) => void,
  onStderr: (c: Buffer) => void,
): Promise<void> {
  const { conn } = shared;
  let stream: Readable;
  try {
    stream = (await conn.timed(
      `follow the logs of container ${handle.id}`,
      (await conn.api()).getContainer(handle.id).logs({ follow: true, stdout: true, stderr: true }),
    )) as unknown as Readable;
  } catch (err) {
    throw conn.translate(err, `follow the logs of container ${handle.id}`);
  }
  shared.outputs.set(handle.id, demux(await conn.api(), stream, onStdout, onStderr, shared.log));
}
