import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { RunExit, StopSignal } from '../types.js';
import { AGENT_CONTAINER, FETCH_CONTAINER } from './names.js';

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

/** The init container that fetches the run's files. */
export function fetchStatus(pod: V1Pod) {
  return pod.status?.initContainerStatuses?.find((s) => s.name === FETCH_CONTAINER);
}

/** Why a container of the pod can never start (its image cannot be pulled…), or undefined. */
export function fatalWaiting(pod: V1Pod): string | undefined {
  for (const status of [fetchStatus(pod), agentStatus(pod)]) {
    const waiting = status?.state?.waiting;
    if (waiting?.reason && FATAL_WAITING.has(waiting.reason))
      return `${waiting.reason}: ${waiting.message ?? ''}`.trim();
  }
  return undefined;
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
  const fetched = pod ? fetchStatus(pod)?.state?.terminated : undefined;
  if (fetched && fetched.exitCode !== 0) {
    return {
      exitCode: null,
      signal: ended.signal ?? null,
      oomKilled: fetched.reason === 'OOMKilled',
      error: `the pod of Job ${jobName} could not fetch its run's files from the daemon (exit ${fetched.exitCode}): ${(fetched.message ?? fetched.reason ?? '').trim() || 'no message'}`,
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
