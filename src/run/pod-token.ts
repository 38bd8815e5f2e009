import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { TOKEN_FILE } from '../kubectl/broker/install-guard.js';
import type { PodBroker } from '../kubectl/broker/pod-broker.js';

// The run token of an agent pod's kubectl guard: registered with the pod broker for the run's socket,
// written into the guard's folder (`kubectl-guard/token`, mode 0640: the daemon and the agent's group,
// which is the daemon's fsGroup) for the guard client to send, revoked and deleted when the run ends.
// A new leader adopting the run finds the file there and registers the same token, so the agent's
// calls go on working through the takeover. The token never enters the Job spec, argv or a log.

export interface PodToken {
  revoke(): Promise<void>;
}

/** How long a run's token may be used: the run's time limit and its stop escalation, plus a minute. */
export const tokenLifetimeMs = (config: Config): number =>
  config.agent.timeout + 2 * config.agent.stop_grace + 60_000;

export async function grantPodToken(
  broker: PodBroker,
  run: { runId: string; guardDir: string; socketPath: string; expiresAt: number },
): Promise<PodToken> {
  const file = path.join(run.guardDir, TOKEN_FILE);
  const target = { socketPath: run.socketPath };
  // An adopted run: the agent already holds this token.
  const held = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (held) broker.tokens.register(run.runId, held, target, run.expiresAt);
  else await writeFile(file, `${broker.tokens.issue(run.runId, target, run.expiresAt)}\n`, { mode: 0o640 });
  let revoked = false;
  return {
    revoke: async () => {
      if (revoked) return;
      revoked = true;
      broker.tokens.revoke(run.runId);
      await rm(file, { force: true });
    },
  };
}
