import type { Config } from '../config/schema.js';
import type { Env } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import type { Leadership } from './types.js';

/**
 * The leader election of this replica. Losing the Lease ends the process at once, the way client-go's
 * controllers do: another replica may lead from the moment the Lease runs out, and a daemon that kept
 * supervising or recording runs after that would race it. Exiting is a SIGKILL the daemon is built to
 * survive (every write is atomic, runs are adopted by the next leader through their Job names), and
 * the pod's restart brings this replica back as a standby. In a pod (POD_NAME and POD_NAMESPACE from the
 * downward API) the role is also a label on the pod, which the Service selects: webhooks and agent pods'
 * broker calls reach the leader only.
 */
export async function electLeader(
  config: Config,
  daemonId: string,
  host: { env: Env; onLost: () => void },
  log: Logger,
): Promise<Leadership> {
  const le = config.leader_election;
  const { createLeaseStore, createPodLabeler, ROLE_LABEL } = await import('../engines/kubernetes/index.js');
  const { LeaderElector } = await import('../election/elector.js');
  const store = createLeaseStore({
    name: le.lease_name,
    namespace: le.namespace ?? config.kubernetes.namespace,
    env: host.env,
  });
  const { POD_NAME: podName, POD_NAMESPACE: podNamespace } = host.env;
  const labeler =
    podName && podNamespace
      ? createPodLabeler({ podName, namespace: podNamespace, env: host.env })
      : undefined;
  const electionLog = log.child({ component: 'leader-election' });
  let problem: string | undefined;
  // Label writes go one after another, so that the last role set is the last one asked for.
  let labelled = Promise.resolve();
  const label = (role: 'leader' | 'standby') => {
    if (!labeler) return;
    labelled = labelled.then(() =>
      labeler.label(role).then(
        () => void (problem = undefined),
        (err: unknown) => {
          problem = `the pod's ${ROLE_LABEL}=${role} label could not be set (${errorMessage(err)}); the Service cannot route to this replica by it`;
          electionLog.error({ role, err: errorMessage(err) }, 'pod role label not set');
        },
      ),
    );
  };
  const elector = new LeaderElector({
    store,
    identity: le.identity ?? daemonId,
    leaseDurationMs: le.lease_duration,
    renewDeadlineMs: le.renew_deadline,
    retryPeriodMs: le.retry_period,
    log: electionLog,
    onStartedLeading: () => label('leader'),
    onLost: (why) => {
      log.error(
        { why, lease: store.where },
        'leadership lost: exiting so that only the new leader runs incidents',
      );
      host.onLost();
    },
  });
  // A restarted leader's pod still says leader: say standby first.
  label('standby');
  return {
    start: () => elector.start(),
    whenLeader: () => elector.whenLeader(),
    stop: (options) => elector.stop(options),
    get state() {
      return elector.state;
    },
    get holder() {
      return elector.holder;
    },
    get problem() {
      return problem;
    },
  };
}
