// The daemon-side stand-in for the real kubectl in kubectl-guard tests: a small script that the
// broker runs for allowed calls. It appends each call (arguments, KUBECONFIG, TRIAGE_STAGE) to
// calls.log next to itself and answers `get pods` with a fixed table.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from './runs.js';

export const FAKE_PODS_TABLE =
  'NAME    READY   STATUS             RESTARTS   AGE\nweb-1   0/1     CrashLoopBackOff   7          12m\n';

const SCRIPT = `#!/bin/sh
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
printf '%s | KUBECONFIG=%s TRIAGE_STAGE=%s\\n' "$*" "\${KUBECONFIG:-unset}" "\${TRIAGE_STAGE:-unset}" >> "$here/calls.log"
case "$1" in
  get) printf '${FAKE_PODS_TABLE.replace(/\n/g, '\\n')}' ;;
  *) echo "daemon-side kubectl: $*" ;;
esac
`;

export interface DaemonKubectl {
  /** Absolute path of the script: set kubectl.command to it. */
  command: string;
  /** One line per call the broker passed through: `<args> | KUBECONFIG=… TRIAGE_STAGE=…`. */
  calls(): Promise<string[]>;
}

/** Writes the stand-in into `dir` (created, readable by everyone). */
export async function daemonKubectl(dir: string): Promise<DaemonKubectl> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const command = path.join(dir, 'kubectl');
  await writeFile(command, SCRIPT);
  await chmod(command, 0o755);
  return {
    command,
    calls: async () =>
      (await readFile(path.join(dir, 'calls.log'), 'utf8').catch(() => ''))
        .split('\n')
        .filter((l) => l !== ''),
  };
}

export interface GuardFixture {
  root: { dir: string; cleanup: () => Promise<void> };
  /** The daemon-side stand-in for kubectl. */
  real: DaemonKubectl;
  /** A kubeconfig of the daemon's, which the agent must never see. */
  kubeconfig: string;
}

/** A temp root (readable by a container user) with the daemon-side kubectl and a daemon kubeconfig. */
export async function guardFixture(prefix: string): Promise<GuardFixture> {
  const root = await tempDir(prefix);
  await chmod(root.dir, 0o755);
  const real = await daemonKubectl(path.join(root.dir, 'daemon-bin'));
  const kubeconfig = path.join(root.dir, 'daemon-kubeconfig');
  await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\n');
  return { root, real, kubeconfig };
}
