import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { RunExit, StopSignal } from '../types.js';
import { AGENT_CONTAINER } from './names.js';

// What a Job and its pod say about the run (pure): finished or not, why it failed, whether its
// container can ever start, and the run's exit as the engine reports it.

export function finishedCondition(job: V1Job): 'Complete' | 'Failed' | undefined {
  for (const c of job.status?.conditions ?? []) {
    if (c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed')) return c.type;
  }
  return undefined;
}

export function failedReason(job: V1Job): string | undefined {
  return job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True')?.reason;
}

/** A container that can never start: the Job would sit pending until its deadline. */
export const FATAL_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

export function agentStatus(pod: V1Pod) {
  return pod.status?.containerStatuses?.find((s) => s.name === AGENT_CONTAINER);
}

const SIGNALS: Record<number, string> = { 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' };

export function newestPod(pods: V1Pod[]): V1Pod | undefined {
  return [...pods].sort(
    (a, b) =>
      new Date(b.metadata?.creationTimestamp ?? 0).getTime() -
      new Date(a.metadata?.creationTimestamp ?? 0).getTime(),
  )[0];
}

/**
 * The run's exit from its ended Job and newest pod: the agent container's own exit when it reported
 * one, else the deadline, else why the Job ended. `signal` is the stop the daemon sent, if any.
 */
export function exitOf(
  job: V1Job | undefined,
  pod: V1Pod | undefined,
  jobName: string,
  ended: { deleted: boolean; signal?: StopSignal },
): RunExit {
  const terminated = pod ? agentStatus(pod)?.state?.terminated : undefined;
  if (terminated) {
    return {
      exitCode: terminated.exitCode,
      signal:
        terminated.signal !== undefined
          ? (SIGNALS[terminated.signal] ?? String(terminated.signal))
          : (ended.signal ?? null),
      oomKilled: terminated.reason === 'OOMKilled',
    };
  }
  const reason = job ? failedReason(job) : undefined;
  if (reason === 'DeadlineExceeded') {
    return {
      exitCode: null,
      signal: 'SIGKILL',
      oomKilled: false,
      error: `Job ${jobName} exceeded activeDeadlineSeconds=${job?.spec?.activeDeadlineSeconds ?? '?'} and was stopped by Kubernetes`,
    };
  }
  return {
    exitCode: null,
    signal: ended.signal ?? null,
    oomKilled: false,
    error: ended.deleted
      ? `Job ${jobName} was deleted before its agent container reported an exit code`
      : `Job ${jobName} ended (${reason ?? finishedCondition(job ?? {}) ?? 'unknown'}) without a terminated agent container`,
  };
}
