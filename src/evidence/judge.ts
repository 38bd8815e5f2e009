import type { EvidenceClaim } from '../workspace/run-record.js';
import type { CallIndex, RecordedCall, Resolved } from './calls.js';
import type { CitedCommand, FactClaim, QuoteBlock, QuotedLine } from './claims.js';
import type { CitedCall, QuoteChecker, QuoteVerdict } from './quote-check.js';
import { checkValue, keyValues, type ValueCheck, type ValueSource } from './values.js';
import { checkMetricValue, metricValues, type MetricCheck } from './promql.js';

// Each fact and each block of quoted output against the run's record: the calls it cites (did they
// run, for that resource, namespace and flags?), the lines it quotes (in that call's output?), and the
// values it states (do the output's fields agree?). The headline and inferences are judged on the
// facts they rest on (chain.ts).

export type Status = EvidenceClaim['status'];

export interface Judged extends EvidenceClaim {
  /** For a claim that does not hold because of a fact it rests on: that fact and why. */
  root?: { id: string; why: string };
  /** The successful calls the claim rests on, for the headline's own values. */
  calls: RecordedCall[];
  /** Lines it quotes that no output holds (result.json `excerptsNotFound`). */
  missing: string[];
  /** Quoted lines the record holds. */
  found: number;
}

export interface JudgeContext {
  index: CallIndex;
  quotes: QuoteChecker;
  /** Names of the objects the run's calls named or listed, and their workloads' prefixes (`api` of `api-7d9f-x2k9q`). */
  objects: ObjectNames;
  unrecorded: boolean;
}

const CLIP = 240;
export const clip = (text: string): string => (text.length <= CLIP ? text : `${text.slice(0, CLIP - 1)}…`);
const quoted = (text: string): string => `"${clip(text.trim()).slice(0, 120)}"`;

export interface ObjectNames {
  names: Set<string>;
  prefixes: Set<string>;
}

/** The names and every dash-prefix of them of at least 3 characters. */
export function objectNames(names: Iterable<string>): ObjectNames {
  const out: ObjectNames = { names: new Set(), prefixes: new Set() };
  for (const name of names) {
    out.names.add(name);
    for (let at = name.indexOf('-'); at >= 3; at = name.indexOf('-', at + 1))
      out.prefixes.add(name.slice(0, at));
  }
  return out;
}

/** The pods (or their workload's prefix) a text is about, among the objects the run saw. */
export function subjectsOf(text: string, objects: ObjectNames): string[] {
  const found = new Set<string>();
  for (const word of text.match(/[a-z0-9][a-z0-9.-]*[a-z0-9]/g) ?? [])
    if (objects.names.has(word) || objects.prefixes.has(word)) found.add(word);
  return [...found];
}

const aboutSubject = (names: string[], subjects: string[]): boolean =>
  names.some((n) => subjects.some((s) => n === s || n.startsWith(`${s}-`)));

function describeFailure(cited: CitedCommand, resolved: Resolved | undefined, unrecorded: boolean): string {
  if (!resolved) return `\`${cited.text}\` is not a kubectl or promql command the check can read`;
  if (resolved.status === 'never run') {
    if (unrecorded) return `\`${cited.text}\` is not in the record (the agent's calls were not recorded)`;
    const nearest = resolved.nearest ? ` (\`${resolved.nearest.label}\` did)` : '';
    return `it cites \`${cited.text}\`, which never ran${nearest}`;
  }
  const call = resolved.failed[0];
  if (resolved.status === 'refused')
    return `\`${cited.text}\` was refused (${call?.record.rule ?? 'a rule'})`;
  return `\`${cited.text}\` failed (${call?.failure ?? 'failed'}, exit ${call?.record.exitCode ?? '?'})`;
}

/**
 * The metric values a fact states, against the promql answers it cites. Only a fact that cites promql
 * alone can be contradicted by them: beside a kubectl call, a number may be that call's.
 */
function metricChecks(statement: string, calls: RecordedCall[]): MetricCheck[] {
  const promql = calls.filter((c) => c.promql);
  if (promql.length === 0) return [];
  const sources = promql.map((c) => c.asMetricSource());
  const alone = promql.length === calls.length;
  return metricValues(statement).map((v) => {
    const check = checkMetricValue(v, sources);
    return check.kind === 'contradicted' && !alone ? { kind: 'unknown', value: v } : check;
  });
}

/** The key values of a statement against the kubectl outputs, its metric values against the promql answers. */
function valueChecks(statement: string, calls: RecordedCall[], subjects: string[]): ValueCheck[] {
  const sources: ValueSource[] = calls.map((c) => c.asSource());
  const metric = metricChecks(statement, calls);
  return [
    ...keyValues(statement)
      .map((v) => checkValue(v, sources, subjects))
      // A number of a metric is held to the answer's values instead.
      .filter((c) => !(metric.length > 0 && c.kind === 'unknown' && /^\d/.test(c.value.value))),
    ...metric.map(asValueCheck),
  ];
}

/** A metric check as a value check: the value as written, the answer as the call returned it. */
function asValueCheck(check: MetricCheck): ValueCheck {
  const value = { kind: 'literal' as const, value: check.value.text };
  if (check.kind === 'contradicted')
    return { kind: 'contradicted', value, field: 'metric value', actual: check.actual, source: check.source };
  return check.kind === 'confirmed'
    ? { kind: 'confirmed', value, source: check.source }
    : { kind: 'unknown', value };
}

function contradiction(check: Extract<ValueCheck, { kind: 'contradicted' }>): string {
  return `${check.field}: the report says ${check.value.value}; \`${check.source}\` says ${check.actual}`;
}

/** What a quote's verdict says about the claim. */
function quoteProblem(text: string, v: QuoteVerdict, cited: CitedCall[]): string | undefined {
  switch (v.kind) {
    case 'other':
      return `it quotes ${quoted(text)} from \`${v.call.label}\`, not from ${cited.map((c) => `\`${c.call.label}\``).join(', ')}`;
    case 'error':
      return `it quotes the error of a call that failed (${v.call.failure}: \`${v.call.label}\`), not cluster data`;
    case 'missing':
      return `${quoted(text)} is in no recorded output`;
    case 'alert':
      return cited.length > 0
        ? `it quotes ${quoted(text)} from the alert or the triage output, not from ${cited.map((c) => `\`${c.call.label}\``).join(', ')}`
        : undefined;
    default:
      return undefined;
  }
}

/** Words a statement uses that an output supporting it would mention. */
function telling(text: string): string[] {
  const stop =
    /^(?:the|and|that|this|with|from|into|because|which|while|after|before|there|their|when|were|have|been|than|then|they|them|also|only|source|sources|evidence|shows?|showed|says?|said|output|container|pod|pods)$/i;
  return [...new Set(text.toLowerCase().match(/[a-z][a-z0-9_-]{3,}/g) ?? [])].filter((w) => !stop.test(w));
}

export function judgeFact(fact: FactClaim, ctx: JudgeContext): Judged {
  const problems: string[] = [];
  const notes: string[] = [];
  const cited: CitedCall[] = [];
  let unrecorded = false;
  for (const source of fact.sources) {
    const resolved = ctx.index.resolve(source.text);
    if (resolved?.status === 'succeeded')
      for (const call of resolved.calls) cited.push({ call, pipes: source.pipes });
    else if (ctx.unrecorded && resolved?.status === 'never run') unrecorded = true;
    else problems.push(describeFailure(source, resolved, false));
  }
  const quotes = judgeLines(fact.quotes, cited, ctx);
  problems.push(...quotes.problems);
  notes.push(...quotes.notes);
  // Its values are read from what it says and what it quotes; commands say nothing of the pod.
  const statement = [fact.full, ...fact.quotes.map((q) => q.text)]
    .join('\n')
    .replace(/`(?:kubectl|k|oc|kubecolor|promql)\s[^`]*`/g, ' ');
  const subjects = subjectsOf(statement, ctx.objects);
  const calls = cited.length > 0 ? cited.map((c) => c.call) : quotes.calls;
  const named = cited.filter((c) => c.call.names().length > 0);
  if (
    subjects.length > 0 &&
    named.length > 0 &&
    named.length === cited.length &&
    !named.some((c) => aboutSubject(c.call.names(), subjects))
  )
    problems.push(
      `it cites \`${named[0]?.call.label ?? ''}\`, about ${named[0]?.call.names().join(', ')}, but the fact is about ${subjects.join(', ')}`,
    );
  const checks = valueChecks(statement, calls, subjects);
  const base = {
    text: clip(fact.text),
    kind: 'fact' as const,
    id: fact.id,
    source: clip(
      [
        ...fact.sources.map((s) => [s.text, ...s.pipes].join(' | ')),
        ...fact.tiers.map((t) => `the ${t}`),
      ].join('; '),
    ),
    calls,
    missing: quotes.missing,
    found: quotes.found,
  };
  const against = checks.filter(
    (c): c is Extract<ValueCheck, { kind: 'contradicted' }> => c.kind === 'contradicted',
  );
  if (against.length > 0)
    return { ...base, status: 'contradicted', why: against.map(contradiction).join('; ') };
  if (problems.length > 0) return { ...base, status: 'unsupported', why: problems.join('; ') };
  if (unrecorded || quotes.unrecorded)
    return { ...base, status: 'unchecked', why: "the agent's calls were not recorded: it cannot be checked" };
  const confirmed = checks.filter((c) => c.kind === 'confirmed');
  if (quotes.found > 0 || confirmed.length > 0) {
    const shown = confirmed.map((c) => c.value.value);
    const why = [
      quotes.found > 0
        ? `${quotes.found} quoted line${quotes.found === 1 ? '' : 's'} found in the cited output`
        : '',
      shown.length > 0 ? `the cited output shows ${shown.join(', ')}` : '',
      ...notes,
    ].filter(Boolean);
    return { ...base, status: 'supported', why: why.join('; ') };
  }
  if (quotes.cut || quotes.derived) return { ...base, status: 'unchecked', why: notes.join('; ') };
  if (fact.tiers.length > 0 || quotes.alert > 0)
    return { ...base, status: 'alert', why: 'from the alert/triage: not cluster evidence' };
  if (fact.sources.length === 0 && fact.quotes.length === 0)
    return { ...base, status: 'unsupported', why: 'it cites no source: no command, no quoted output' };
  if (quotes.weak.length > 0 && checks.length === 0 && cited.length === 0)
    return { ...base, status: 'unsupported', why: `its quotes identify nothing (${quotes.weak.join('; ')})` };
  const unknown = checks.map((c) => c.value.value);
  if (unknown.length > 0)
    return { ...base, status: 'unsupported', why: `${unknown.join(', ')}: not in what it cites` };
  // No value to compare: the cited output must at least speak of what the statement says, on its
  // lines about the statement's pods.
  const words = telling(statement).filter((w) => !subjects.includes(w));
  const text = calls.map((c) => speaksOf(c, subjects)).join('\n');
  const shown = words.filter((w) => text.includes(w));
  if (cited.length > 0 && (words.length === 0 || shown.length * 2 >= words.length))
    return {
      ...base,
      status: 'supported',
      why: 'the cited call ran and its output speaks of what the fact says',
    };
  return {
    ...base,
    status: 'unsupported',
    why: `the cited output does not show it (${words
      .filter((w) => !shown.includes(w))
      .slice(0, 5)
      .join(', ')})`,
  };
}

/** A call's output about `subjects`, in lower case: all of it for a call that named one of them. */
export function speaksOf(call: RecordedCall, subjects: string[]): string {
  if (subjects.length === 0 || aboutSubject(call.names(), subjects)) return call.lowerText();
  return call
    .lines()
    .filter((l) => subjects.some((s) => l.includes(s)))
    .join('\n')
    .toLowerCase();
}

/** Words of a statement that its evidence would mention. */
export const tellingWords = (text: string): string[] => telling(text);

interface Lines {
  problems: string[];
  notes: string[];
  calls: RecordedCall[];
  missing: string[];
  weak: string[];
  found: number;
  alert: number;
  cut: boolean;
  derived: boolean;
  unrecorded: boolean;
}

/** Quoted lines: each against the call shown with it (a console block), else the cited calls. */
function judgeLines(lines: QuotedLine[], cited: CitedCall[], ctx: JudgeContext): Lines {
  const out: Lines = {
    problems: [],
    notes: [],
    calls: [],
    missing: [],
    weak: [],
    found: 0,
    alert: 0,
    cut: false,
    derived: false,
    unrecorded: false,
  };
  for (const line of lines) {
    let own = cited;
    if (line.command) {
      const resolved = ctx.index.resolve(line.command.text);
      if (resolved?.status !== 'succeeded') {
        if (!(ctx.unrecorded && resolved?.status === 'never run')) {
          const problem = describeFailure(line.command, resolved, false);
          if (!out.problems.includes(problem)) out.problems.push(problem);
          continue;
        }
        own = [];
      } else own = resolved.calls.map((call) => ({ call, pipes: line.command?.pipes ?? [] }));
    }
    const v = ctx.quotes.check(line.text, own, line.yaml);
    if (!v) continue;
    if (v.kind === 'found') {
      out.found++;
      if (!out.calls.includes(v.call)) out.calls.push(v.call);
      continue;
    }
    if (v.kind === 'weak') out.weak.push(`${quoted(line.text)}: ${v.why}`);
    else if (v.kind === 'alert') out.alert++;
    else if (v.kind === 'cut') {
      out.cut = true;
      out.notes.push(
        `${quoted(line.text)} cannot be checked: output cut${v.call ? ` (\`${v.call.label}\`)` : ''}`,
      );
    } else if (v.kind === 'derived') {
      out.derived = true;
      out.notes.push(`${quoted(line.text)} is derived, not checked: ${v.why}`);
    } else if (v.kind === 'unrecorded') out.unrecorded = true;
    const problem = quoteProblem(line.text, v, own);
    if (problem) out.problems.push(problem);
    if (v.kind === 'missing') out.missing.push(line.text.replace(/\s+/g, ' ').trim());
  }
  return out;
}

/** A block of output quoted outside the facts. */
export function judgeBlock(block: QuoteBlock, ctx: JudgeContext): Judged | undefined {
  const lines = judgeLines(block.lines, [], ctx);
  const first = block.lines.find((l) => l.text.trim())?.text.trim() ?? '';
  const command = block.lines.find((l) => l.command)?.command;
  const base = {
    text: clip(block.lines.length > 1 ? `${first} (+${block.lines.length - 1} lines)` : first),
    kind: 'quote' as const,
    id: block.where,
    source: command ? clip([command.text, ...command.pipes].join(' | ')) : '',
    calls: lines.calls,
    missing: lines.missing,
    found: lines.found,
  };
  if (lines.problems.length > 0)
    return {
      ...base,
      status: 'unsupported',
      why: clip(
        lines.problems.slice(0, 3).join('; ') +
          (lines.problems.length > 3 ? `; ${lines.problems.length - 3} more` : ''),
      ),
    };
  if (lines.unrecorded) return { ...base, status: 'unchecked', why: "the agent's calls were not recorded" };
  if (lines.cut || lines.derived) return { ...base, status: 'unchecked', why: clip(lines.notes.join('; ')) };
  if (lines.found > 0)
    return {
      ...base,
      status: 'supported',
      why: `${lines.found} quoted line${lines.found === 1 ? '' : 's'} found in the recorded output`,
    };
  if (lines.alert > 0)
    return {
      ...base,
      status: 'alert',
      why: 'found only in the alert or the triage output: not cluster evidence',
    };
  if (lines.weak.length > 0)
    return { ...base, status: 'unchecked', why: clip(`identifies nothing: ${lines.weak.join('; ')}`) };
  return undefined;
}
