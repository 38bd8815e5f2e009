import type Docker from 'dockerode';
import type { Config } from '../../config/schema.js';
import { assertNoEngineSocket } from '../labels.js';
import type { RunSpec } from '../types.js';

// What makes an agent container hardened: a non-root user, limits the engine cannot read as
// "unlimited", and the HostConfig with every hardening on (docs/architecture.md).

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

/** Which engine serves the Docker API: the hardening differs in details (tmpfs ownership). */
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

/** HostConfig of an agent container: every hardening (docs/architecture.md), on by default. */
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
