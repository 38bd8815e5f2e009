import type { ClusterCallRecord } from '../kubectl/broker/calls.js';
import type { CallOutputRecord } from '../kubectl/broker/outputs.js';
import { parseKubectl, shellQuote, splitCommandLine, type KubectlCommand } from '../kubectl/parse.js';
import { classifyFailure, type CallFailure } from './gaps.js';
import { covers, parseCited } from './match.js';
import { parseOutput, type ParsedOutput } from './parse/index.js';
import { EMPTY_OUTPUT } from './parse/types.js';
import type { ParsedPromql } from '../prometheus/command.js';
import { parsePromql } from '../prometheus/command.js';
import {
  answerValues,
  parsePromqlWords,
  promqlCovers,
  promqlSameSubject,
  type MetricSource,
} from './promql.js';
import { collapsedLines, normalizeCollapsed } from './normalize.js';
import { outputLines } from './quote.js';
import type { ValueSource } from './values.js';

// The run's recorded kubectl and promql calls, as the evidence check asks about them: which call a
// cited command is (the same resource, namespace and flags: `logs x` is not `logs x --previous`; the
// same promql subcommand and expression), what it returned, its output read into fields and lines
// (once, when first asked), and whether it read anything from the cluster (the API server, or the
// cluster's Prometheus: an answer it gave is cluster evidence).

export type CallStatus = 'succeeded' | 'failed' | 'refused' | 'never run';

export class RecordedCall {
  readonly command: KubectlCommand;
  private fields: ParsedOutput | undefined;
  private normalized: string[] | undefined;
  private some: string[] | undefined;
  private errors: string[] | undefined;
  private named: string[] | undefined;
  private lower: string | undefined;
  private raw: string[] | undefined;
  private metric: number[] | undefined;
  private typed: string | undefined;
  private counts: Map<string, number> | undefined;
  /** A promql call's command (tool `prometheus`); undefined for kubectl. */
  readonly promql: ParsedPromql | undefined;

  constructor(
    readonly record: ClusterCallRecord,
    readonly output: CallOutputRecord | undefined,
  ) {
    const promql = record.tool === 'prometheus' ? parsePromql(record.argv) : undefined;
    this.promql = promql?.ok && !('help' in promql) ? promql : undefined;
    this.command = parseKubectl(record.tool === 'kubectl' ? record.argv : []);
  }

  /** The call as the agent typed it (made when a message names it: most calls are never named). */
  get label(): string {
    const tool = this.record.tool === 'prometheus' ? 'promql' : 'kubectl';
    this.typed ??= [tool, ...this.record.argv].map(shellQuote).join(' ');
    return this.typed;
  }

  /** It ran and answered; a promql call only when Prometheus answered it (not `promql --help`). */
  get succeeded(): boolean {
    if (this.record.decision !== 'allowed' || this.record.exitCode !== 0) return false;
    return this.record.tool !== 'prometheus' || (this.promql !== undefined && this.output !== undefined);
  }

  /** The output was cut at a size bound: what it does not hold may have been printed. */
  get cut(): boolean {
    return this.output?.cut !== undefined && this.output.cut.stdoutBytes > 0;
  }

  get failure(): CallFailure {
    return classifyFailure(this.record, this.output);
  }

  parsed(): ParsedOutput {
    if (this.promql) return EMPTY_OUTPUT;
    this.fields ??= parseOutput(this.command, this.output?.stdout ?? '');
    return this.fields;
  }

  lines(): string[] {
    this.normalized ??= normalizeCollapsed(this.rawLines());
    return this.normalized;
  }

  /** Line `i` normalised, alone (most quotes need only the lines that could hold them normalised). */
  lineAt(i: number): string {
    if (this.normalized) return this.normalized[i] ?? '';
    this.some ??= [];
    return (this.some[i] ??= normalizeCollapsed([this.rawLines()[i] ?? ''])[0] ?? '');
  }

  /** Its output's lines as printed, runs of spaces collapsed (a quote copied whole is one of them). */
  rawLines(): string[] {
    this.raw ??= collapsedLines(this.output?.stdout ?? '');
    return this.raw;
  }

  /** Each line of its output (as printed) and on how many lines it was: a line copied whole is looked up. */
  lineCounts(): Map<string, number> {
    if (this.counts) return this.counts;
    const counts = new Map<string, number>();
    for (const line of this.rawLines()) counts.set(line, (counts.get(line) ?? 0) + 1);
    this.counts = counts;
    return counts;
  }

  /** Its output's lines in lower case, joined: what a statement's words are looked for in. */
  lowerText(): string {
    this.lower ??= this.rawLines().join('\n').toLowerCase();
    return this.lower;
  }

  errorLines(): string[] {
    this.errors ??= outputLines(this.output?.stderr ?? '');
    return this.errors;
  }

  /** The objects the call named (`describe pod api-1` → api-1). */
  names(): string[] {
    this.named ??= this.command.targets.flatMap((t) => t.names);
    return this.named;
  }

  /** A promql call's answer as the values it held. */
  asMetricSource(): MetricSource {
    this.metric ??= answerValues(this.output);
    return { label: this.label, values: this.metric };
  }

  asSource(): ValueSource {
    return { label: this.label, parsed: this.parsed(), lines: () => this.rawLines(), names: this.names() };
  }
}

/**
 * Calls that read the cluster: a promql answer (the cluster's own Prometheus), and every kubectl verb
 * but those that answer without the API server (`version --client`, `config`, cached discovery).
 */
function needsServer(call: RecordedCall): boolean {
  if (call.promql) return true;
  const command = call.command;
  const verb = command.verb ?? '';
  if (
    [
      'config',
      'completion',
      'plugin',
      'kustomize',
      'help',
      'options',
      'api-resources',
      'api-versions',
      'explain',
    ].includes(verb)
  )
    return false;
  if (verb === 'version' && command.flags.client === 'true') return false;
  return verb !== '' && command.plugin === undefined;
}

export interface Resolved {
  status: CallStatus;
  /** The recorded calls the cited command describes that succeeded. */
  calls: RecordedCall[];
  /** Calls that failed or were refused, when none succeeded. */
  failed: RecordedCall[];
  /** A call of the same verb and object that did run, when the cited one never did (`logs x --previous`). */
  nearest?: RecordedCall;
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** What became of the calls a citation describes; `nearest` is asked only when none ran. */
function outcome(candidates: RecordedCall[], nearestOf: () => RecordedCall | undefined): Resolved {
  const calls = candidates.filter((c) => c.succeeded);
  if (calls.length > 0) return { status: 'succeeded', calls, failed: [] };
  const failed = candidates.filter((c) => c.record.decision === 'allowed');
  if (failed.length > 0) return { status: 'failed', calls: [], failed };
  if (candidates.length > 0) return { status: 'refused', calls: [], failed: candidates };
  const nearest = nearestOf();
  return { status: 'never run', calls: [], failed: [], ...(nearest ? { nearest } : {}) };
}

export class CallIndex {
  readonly calls: RecordedCall[];
  private readonly byVerb = new Map<string, RecordedCall[]>();
  /** By verb and each object named: a citation naming one is compared with those calls only. */
  private readonly byName = new Map<string, RecordedCall[]>();
  /** By verb and namespace (`*` for every namespace): a citation in one namespace is compared with those. */
  private readonly byNamespace = new Map<string, RecordedCall[]>();
  /** Resolutions by the cited text: a report cites the same command many times. */
  private readonly resolved = new Map<string, Resolved | undefined>();
  private readonly promqlCalls: RecordedCall[] = [];

  constructor(records: ClusterCallRecord[], outputs: CallOutputRecord[]) {
    const byNumber = new Map(outputs.map((o) => [o.call, o]));
    this.calls = records
      .filter((r) => r.tool === 'kubectl' || r.tool === 'prometheus')
      .map((r) => new RecordedCall(r, r.call === undefined ? undefined : byNumber.get(r.call)));
    for (const call of this.calls) {
      if (call.record.tool === 'prometheus') {
        this.promqlCalls.push(call);
        continue;
      }
      const verb = call.command.verb ?? '';
      push(this.byVerb, verb, call);
      for (const name of new Set(call.names())) push(this.byName, `${verb}\u0000${name}`, call);
      // A call of every namespace may be the one a citation of any namespace describes.
      push(
        this.byNamespace,
        `${verb}\u0000${call.command.allNamespaces ? '*' : (call.command.namespace ?? '')}`,
        call,
      );
    }
  }

  /** The recorded calls a cited command line describes, and what became of them. */
  resolve(text: string): Resolved | undefined {
    if (this.resolved.has(text)) return this.resolved.get(text);
    const result = this.resolveNew(text);
    this.resolved.set(text, result);
    return result;
  }

  private resolveNew(text: string): Resolved | undefined {
    const words = splitCommandLine(text);
    const promql = words && parsePromqlWords(words);
    if (promql) return this.resolvePromql(promql, text);
    const cited = words && parseCited(words);
    if (!cited) return undefined;
    const name = cited.targets.find((t) => t.names.length > 0)?.names[0];
    const verb = cited.verb ?? '';
    const pool =
      name !== undefined
        ? (this.byName.get(`${verb}\u0000${name}`) ?? [])
        : cited.namespace !== undefined && !cited.allNamespaces
          ? [
              ...(this.byNamespace.get(`${verb}\u0000${cited.namespace}`) ?? []),
              ...(this.byNamespace.get(`${verb}\u0000*`) ?? []),
            ]
          : (this.byVerb.get(verb) ?? []);
    const candidates = pool.filter((c) => covers(c.command, cited));
    const names = cited.targets.flatMap((t) => t.names);
    // A call naming every object the citation names is among those naming its first.
    return outcome(candidates, () =>
      (names[0] === undefined
        ? (this.byVerb.get(verb) ?? [])
        : (this.byName.get(`${verb}\u0000${names[0]}`) ?? [])
      ).find((c) => c.succeeded && names.every((n) => c.names().includes(n))),
    );
  }

  private resolvePromql(cited: ParsedPromql, text: string): Resolved {
    const candidates = this.promqlCalls.filter(
      (c) => c.promql && promqlCovers(c.promql.command, cited.command, text),
    );
    return outcome(candidates, () =>
      this.promqlCalls.find(
        (c) => c.succeeded && c.promql && promqlSameSubject(c.promql.command, cited.command),
      ),
    );
  }

  /** A call that read something from the cluster (its API server or its Prometheus) succeeded. */
  serverRead(): boolean {
    return this.calls.some((c) => c.succeeded && needsServer(c));
  }

  succeeded(): RecordedCall[] {
    return this.calls.filter((c) => c.succeeded);
  }

  /** Names of the objects the calls named or listed (pods in tables, describe and -o yaml). */
  objectNames(): Set<string> {
    const names = new Set<string>();
    for (const call of this.succeeded()) {
      const named = call.names();
      for (const n of named) names.add(n);
      // A call that named its objects printed those; a listing is read for the pods it printed.
      if (named.length === 0) for (const pod of call.parsed().pods) if (pod.name) names.add(pod.name);
    }
    return names;
  }
}
