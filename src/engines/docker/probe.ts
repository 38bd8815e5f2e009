import type Docker from 'dockerode';
import type { Config } from '../../config/schema.js';
import { errorMessage } from '../../util/errors.js';
import type { ImageProbe } from '../types.js';
import { statusOf, type DockerConnection } from './client.js';
import { hardenedHostConfig } from './hardening.js';

// One-off probe containers: whether an image can run a command (the gateway's bridge needs `node`).
// Hardened like a run's container, with no network and no mounts, and without the engine's init, so
// a missing command is the engine's own refusal (or exit code) rather than a line of init's stderr.

/** The whole probe (create, start, wait, read, remove) is bounded by this. */
export const PROBE_TIMEOUT_MS = 20_000;

/** Answers per image id and command: an image id never changes its content, so it is probed once. */
export type ProbeCache = Map<string, Promise<ImageProbe>>;

export async function probeImage(
  conn: DockerConnection,
  config: Pick<Config, 'docker'>,
  cache: ProbeCache,
  image: string,
  argv: readonly string[],
): Promise<ImageProbe> {
  const docker = await conn.api();
  let id: string;
  try {
    id = (await conn.timed(`inspect image ${image}`, docker.getImage(image).inspect())).Id;
  } catch (err) {
    if (statusOf(err) === 404) return { ok: false, detail: `image ${image} is not on the engine` };
    throw conn.translate(err, `inspect image ${image}`);
  }
  const key = `${id}\0${argv.join('\0')}`;
  const known = cache.get(key);
  if (known) return known;
  const probe = runProbe(conn, config, docker, id, argv);
  cache.set(key, probe);
  // Only answers are kept: an engine that failed or timed out is asked again next time.
  probe.catch(() => cache.delete(key));
  return probe;
}

async function runProbe(
  conn: DockerConnection,
  config: Pick<Config, 'docker'>,
  docker: Docker,
  imageId: string,
  argv: readonly string[],
): Promise<ImageProbe> {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error('probeImage needs a command');
  const action = `probe image ${imageId.slice(0, 19)} with ${argv.join(' ')}`;
  const deadline = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  const bounded = <T>(call: Promise<T>) => bound(call, deadline, conn.endpoint, action);
  const hostConfig = hardenedHostConfig(config, { mounts: [], tmpfs: [] }, await conn.flavor());
  let container: Docker.Container | undefined;
  try {
    container = await bounded(
      docker.createContainer({
        Image: imageId,
        Entrypoint: [command],
        Cmd: args,
        User: config.docker.user,
        Labels: { 'triage-runner.probe': 'true' },
        HostConfig: { ...hostConfig, NetworkMode: 'none', Init: false },
      }),
    );
    try {
      await bounded(container.start());
    } catch (err) {
      // The engine refuses to start a command the image does not have (Docker and Podman alike).
      if (statusOf(err) !== undefined) return { ok: false, detail: errorMessage(err).trim() };
      throw err;
    }
    const status = (await bounded(container.wait())) as { StatusCode?: number };
    const output = unframe(
      (await bounded(container.logs({ stdout: true, stderr: true, follow: false }))) as unknown as Buffer,
    ).trim();
    if (status.StatusCode === 0) return { ok: true, output };
    return {
      ok: false,
      detail: `${argv.join(' ')} exited with code ${String(status.StatusCode)}${output ? `: ${output.slice(0, 300)}` : ''}`,
    };
  } catch (err) {
    throw conn.translate(err, action);
  } finally {
    void container?.remove({ force: true, v: true }).catch(() => undefined);
  }
}

/** Rejects with a TransientError-like timeout when the deadline passes first. */
function bound<T>(call: Promise<T>, deadline: AbortSignal, endpoint: string, action: string): Promise<T> {
  if (deadline.aborted) return Promise.reject(timeoutError(endpoint, action));
  let onAbort: (() => void) | undefined;
  const limit = new Promise<never>((_, reject) => {
    onAbort = () => reject(timeoutError(endpoint, action));
    deadline.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([call, limit]).finally(() => {
    if (onAbort) deadline.removeEventListener('abort', onAbort);
  });
}

function timeoutError(endpoint: string, action: string): Error {
  return new Error(
    `container engine at ${endpoint} did not ${action} within ${PROBE_TIMEOUT_MS} ms; check the engine's health (docker info / podman info)`,
  );
}

/** The text of a non-following logs answer: frames of an 8-byte header (stream, size) and a payload. */
function unframe(buf: Buffer): string {
  const parts: Buffer[] = [];
  let at = 0;
  while (at + 8 <= buf.length) {
    const size = buf.readUInt32BE(at + 4);
    parts.push(buf.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return Buffer.concat(parts).toString('utf8');
}
