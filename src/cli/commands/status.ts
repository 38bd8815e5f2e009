import type { Command } from 'commander';
import { canonicalCluster, clusterRegistry } from '../../clusters/registry.js';
import { ACCURACY_DIMENSIONS, accuracyBy, accuracyOverall, formatAccuracy } from '../../feedback/accuracy.js';
import { INCIDENT_STATES, type IncidentState } from '../../workspace/state.js';
import {
  clusterStates,
  followEvents,
  listAll,
  type ClusterStatus,
  type DaemonApi,
} from '../../status/client.js';
import { formatStatus } from '../../status/format.js';
import { IncidentIndex } from '../../status/incident-index.js';
import { readGradedAnswers } from '../../status/accuracy.js';
import { rootProblem } from '../../status/scan.js';
import type { IncidentView, StatusList } from '../../status/types.js';
import { totalsOf } from '../../status/view.js';
import { errorMessage } from '../../util/errors.js';
import { commandConfig, flagLayer } from '../config.js';
import { daemonFor } from '../daemon-api.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner status [--root DIR] [--state S] [--cluster C] [--json] [--watch] [--accuracy]`: one
// line per incident and the totals by state, from the daemon's index when a daemon answers for the
// root, else read from the workspaces. `--watch` follows the daemon's events (or re-reads the workspaces every few seconds).

export interface StatusFlags {
  root?: string;
  state?: string;
  cluster?: string;
  json?: boolean;
  watch?: boolean;
  accuracy?: boolean;
}

/** Without a daemon, `--watch` reads the workspaces again this often. */
export const POLL_MS = 2000;
/** Redraws at most this often while events arrive. */
const REDRAW_MS = 250;

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('status')
    .description(
      'one line per incident (state, age, attempt, agent, duration, tokens, cost, report, answer) and totals by state',
    )
    .option('--root <dir>', 'workspaces root (default: workspaces_root of the configuration)')
    .option('--state <state>', `only incidents in this state (${INCIDENT_STATES.join(', ')})`)
    .option('--cluster <name>', 'only incidents of this cluster (a registry name or one of its aliases)')
    .option('--json', 'print {incidents:[…], totals:{}} as JSON')
    .option('--watch', 'keep the listing current until interrupted (Ctrl-C)')
    .option(
      '--accuracy',
      'answers graded by responders per agent, model, cluster and fault type, with the confident-wrong count (--json: the rows)',
    )
    .action(async (opts: StatusFlags, cmd: Command) => {
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      if (opts.watch) process.once('SIGINT', onSignal);
      try {
        done(await runStatus(opts, cmd.optsWithGlobals<{ config?: string }>().config, io, stop.signal));
      } finally {
        process.off('SIGINT', onSignal);
      }
    });
}

export async function runStatus(
  opts: StatusFlags,
  file: string | undefined,
  io: CliIO,
  signal: AbortSignal = new AbortController().signal,
): Promise<number> {
  const { config } = commandConfig(io, file, flagLayer([['workspaces_root', opts.root]]));
  const state = parseState(opts.state);
  const root = config.workspaces_root;
  const problem = await rootProblem(root);
  if (problem) throw new CliExit(EXIT.usage, `status: ${problem}`);
  if (opts.accuracy) {
    const answers = await readGradedAnswers(root);
    io.stdout(
      opts.json
        ? `${JSON.stringify(
            {
              overall: accuracyOverall(answers),
              ...Object.fromEntries(ACCURACY_DIMENSIONS.map((d) => [d, accuracyBy(d, answers)])),
            },
            null,
            2,
          )}\n`
        : formatAccuracy(answers),
    );
    return EXIT.ok;
  }
  const daemon = await daemonFor(io, config, root);
  const filter = viewFilter(state, opts.cluster, canonicalCluster(clusterRegistry(config)));
  const print = (list: StatusList & { clusters?: ClusterStatus[] }) =>
    io.stdout(render(list, filter, opts.json === true, io));
  if (!opts.watch) {
    if (!daemon) print(await readLocal(root));
    else {
      const list = await listAll(daemon.api, daemon.first);
      // The cluster registry's state is the daemon's to know (it probes each entry); absent: none.
      const clusters = await clusterStates(daemon.api).catch(() => []);
      print(clusters.length > 0 ? { ...list, clusters } : list);
    }
    return EXIT.ok;
  }
  const clear = opts.json ? '' : '\u001b[H\u001b[2J';
  const show = (list: StatusList) => io.stdout(clear + render(list, filter, opts.json === true, io));
  if (daemon) await watchDaemon(daemon.api, await listAll(daemon.api, daemon.first), show, signal, io);
  else await pollLocal(root, show, signal);
  return EXIT.ok;
}

function parseState(value: string | undefined): IncidentState | undefined {
  if (value === undefined) return undefined;
  if ((INCIDENT_STATES as readonly string[]).includes(value)) return value as IncidentState;
  throw new CliExit(
    EXIT.usage,
    `status: --state ${JSON.stringify(value)} is not an incident state; use one of ${INCIDENT_STATES.join(', ')}`,
  );
}

async function readLocal(root: string): Promise<StatusList> {
  const index = new IncidentIndex({ root });
  await index.load();
  const { incidents, totals } = index.list({ limit: Math.max(1, index.size) });
  return { incidents, totals };
}

/** `--state` and `--cluster` as one test of a view; the cluster compared under the registry's names. */
function viewFilter(
  state: IncidentState | undefined,
  cluster: string | undefined,
  canonical: (cluster: string) => string,
): (view: IncidentView) => boolean {
  const wanted = cluster === undefined ? undefined : canonical(cluster);
  return (view) =>
    (state === undefined || view.state === state) &&
    (wanted === undefined || (view.subject !== null && canonical(view.subject.cluster) === wanted));
}

/** Text or JSON; totals always count every incident, the list only those that pass the filter. */
function render(
  list: StatusList & { clusters?: ClusterStatus[] },
  filter: (view: IncidentView) => boolean,
  json: boolean,
  io: CliIO,
): string {
  const incidents = list.incidents.filter(filter);
  const { clusters } = list;
  if (json)
    return `${JSON.stringify({ incidents, totals: list.totals, ...(clusters ? { clusters } : {}) }, null, 2)}\n`;
  const columns = io.columns?.();
  const text = formatStatus(incidents, list.totals, { cwd: io.cwd, ...(columns ? { columns } : {}) });
  return clusters ? `${text}${formatClusters(clusters)}` : text;
}

/** One line per registry entry: reachable, or what kubectl said. */
function formatClusters(clusters: ClusterStatus[]): string {
  const width = Math.max(...clusters.map((c) => c.name.length));
  const lines = clusters.map(
    (c) => `  ${c.name.padEnd(width)}  ${c.reachable ? 'reachable' : (c.detail ?? 'unreachable')}`,
  );
  return `clusters:\n${lines.join('\n')}\n`;
}

/** Follows the daemon's events, redrawing (at most every REDRAW_MS) until `signal` aborts. */
async function watchDaemon(
  api: DaemonApi,
  initial: StatusList,
  show: (list: StatusList) => void,
  signal: AbortSignal,
  io: CliIO,
): Promise<void> {
  const views = new Map<string, IncidentView>(initial.incidents.map((v) => [v.folder, v]));
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    timer = undefined;
    const incidents = [...views.values()].sort(
      (a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || a.folder.localeCompare(b.folder),
    );
    show({ incidents, totals: totalsOf(incidents) });
  };
  draw();
  try {
    await followEvents(
      api,
      (event) => {
        if (event.type === 'upsert') views.set(event.view.folder, event.view);
        else views.delete(event.folder);
        timer ??= setTimeout(draw, REDRAW_MS);
      },
      signal,
    );
  } catch (err) {
    if (!signal.aborted) throw new CliExit(EXIT.failed, `status --watch: ${errorMessage(err)}`);
  } finally {
    clearTimeout(timer);
  }
  if (!signal.aborted) io.stderr('status --watch: the daemon closed the event stream (it stopped)\n');
}

async function pollLocal(root: string, show: (list: StatusList) => void, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    show(await readLocal(root));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, POLL_MS);
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
