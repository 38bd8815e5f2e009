import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

// How an agent pod holds its run token: it cannot reach a unix socket in the run folder (the pod may be
// on another node), so it calls the gateway over the cluster network, on the daemon's Service port,
// with the run token as every model key. The token never enters the Job spec (the API server keeps
// specs, and anyone who may read Jobs would read it): it is a file in the run folder, which the pod
// mounts from the workspaces claim, and a shell in front of the CLI exports it under each key's name.

/** In the run folder: the pod's run token (0640, the daemon's and the agent's group: the pod's fsGroup). */
export const POD_TOKEN_DIR = 'gateway-pod';
export const POD_TOKEN_FILE = 'token';
/** Names the token file for the shell in front of the CLI. */
export const POD_TOKEN_ENV = 'TRIAGE_GATEWAY_TOKEN_FILE';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface TokenLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  secretEnv?: Record<string, string>;
}

/** Writes the token file in the run bundle; its host path. */
export async function writePodToken(bundleDir: string, token: string): Promise<string> {
  const dir = path.join(bundleDir, POD_TOKEN_DIR);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const file = path.join(dir, POD_TOKEN_FILE);
  await writeFile(file, `${token}\n`, { mode: 0o640 });
  return file;
}

export async function removePodToken(bundleDir: string): Promise<void> {
  await rm(path.join(bundleDir, POD_TOKEN_DIR), { recursive: true, force: true });
}

/**
 * The launch with the run token moved out of its secret environment: every variable whose value is the
 * token is dropped there (so no engine turns it into a value or a secret reference in the spec) and set
 * instead by a shell that reads the token file (`agentRunDir` is the run folder as the pod sees it).
 */
export function launchWithPodToken(launch: TokenLaunch, token: string, agentRunDir: string): TokenLaunch {
  const secretEnv = { ...launch.secretEnv };
  const names = Object.keys(secretEnv).filter((name) => secretEnv[name] === token);
  if (names.length === 0) return launch;
  const bad = names.find((name) => !ENV_NAME.test(name));
  if (bad)
    throw new Error(`cannot hand the run token to the agent as ${JSON.stringify(bad)}: not a variable name`);
  for (const name of names) delete secretEnv[name];
  const exports = names.map((name) => `${name}="$t"`).join(' ');
  // Exit 70 (EX_SOFTWARE) when the file is gone: the CLI would otherwise start with no key at all.
  const script = `t=$(cat "$${POD_TOKEN_ENV}") && [ -n "$t" ] || exit 70; export ${exports}; exec "$0" "$@"`;
  return {
    command: '/bin/sh',
    args: ['-c', script, launch.command, ...launch.args],
    env: { ...launch.env, [POD_TOKEN_ENV]: path.posix.join(agentRunDir, POD_TOKEN_DIR, POD_TOKEN_FILE) },
    secretEnv,
  };
}
