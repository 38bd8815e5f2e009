import type { ContainerFacts, ParsedOutput, PodFacts } from './parse/index.js';

// The key values of a claim — a reason (OOMKilled, CrashLoopBackOff, FailedScheduling), an exit code,
// a restart count, a CPU or memory quantity, an image, a short quoted literal — read from its text, and
// each compared with the fields of the outputs it rests on, for the pods it is about. A value the fields
// disagree with is contradicted, and the contradiction names the field and both values.

export type ValueKind = 'reason' | 'exit code' | 'restart count' | 'quantity' | 'image' | 'literal';

export interface KeyValue {
  kind: ValueKind;
  /** The value as compared (`OOMKilled`, `137`, `512Mi`). */
  value: string;
  /** Other spellings that confirm it (ErrImagePull for ImagePullBackOff, OOMKilling for OOMKilled). */
  also?: string[];
  /** A terminated container's reason: the last state's or state's reason says otherwise when it differs. */
  terminal?: boolean;
  role?: 'limit' | 'request';
  resource?: 'cpu' | 'memory';
}

/** One output a claim rests on, read into fields. */
export interface ValueSource {
  /** The call as the report can be told (`kubectl describe pod api-1 -n shop`). */
  label: string;
  parsed: ParsedOutput;
  /** Its lines (runs of spaces collapsed), read only when no field holds the value. */
  lines: () => string[];
  /** The objects the call named (`describe pod api-1`): none for a listing. */
  names: string[];
}

export type ValueCheck =
  | { kind: 'confirmed'; value: KeyValue; source: string }
  | { kind: 'contradicted'; value: KeyValue; field: string; actual: string; source: string }
  | { kind: 'unknown'; value: KeyValue };

const TERMINAL = ['OOMKilled', 'Error', 'Completed', 'ContainerCannotRun', 'DeadlineExceeded', 'StartError'];
const OTHER_REASONS = [
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'CreateContainerConfigError',
  'CreateContainerError',
  'InvalidImageName',
  'RunContainerError',
  'FailedScheduling',
  'FailedMount',
  'FailedAttachVolume',
  'Unhealthy',
  'OOMKilling',
  'FailedCreatePodSandBox',
  'NodeNotReady',
  'Evicted',
];
const ALSO: Record<string, string[]> = {
  OOMKilled: ['OOMKilling', 'SystemOOM'],
  ImagePullBackOff: ['ErrImagePull'],
  ErrImagePull: ['ImagePullBackOff'],
};

/** Every reason of the vocabulary but Error and Completed (ordinary words, read only after a state word). */
const NAMED = [...TERMINAL.filter((r) => r !== 'Error' && r !== 'Completed'), ...OTHER_REASONS];
const VOCABULARY = new RegExp(`\\b(${NAMED.join('|')})\\b`, 'gi');
const CANONICAL = new Map(NAMED.map((r) => [r.toLowerCase(), r]));

const NEGATION =
  /\b(?:not|no|never|isn't|wasn't|aren't|without|rather than|instead of|unrelated|ruled out|rules out|excluded?|nor)\b[^.;:]{0,40}$/i;
const AFTERWARDS =
  /^[^.;]{0,30}\b(?:is|was|are|were)\s+(?:unrelated|not the cause|a red herring|irrelevant|old)\b/i;

const negated = (text: string, at: number, end: number): boolean =>
  NEGATION.test(text.slice(Math.max(0, at - 60), at)) || AFTERWARDS.test(text.slice(end, end + 60));

const reasonWord = (reason: string): KeyValue => ({
  kind: 'reason',
  value: reason,
  ...(ALSO[reason] ? { also: ALSO[reason] } : {}),
  ...(TERMINAL.includes(reason) ? { terminal: true } : {}),
});

/** The reasons a text names: the vocabulary, "OOM" / "out of memory", "Error" after a state word. */
function reasons(text: string, out: KeyValue[]): void {
  const seen = new Set(out.filter((v) => v.kind === 'reason').map((v) => v.value));
  const add = (reason: string, at: number, end: number) => {
    if (seen.has(reason) || negated(text, at, end)) return;
    seen.add(reason);
    out.push(reasonWord(reason));
  };
  for (const m of text.matchAll(VOCABULARY)) {
    const reason = CANONICAL.get((m[1] ?? '').toLowerCase()) ?? '';
    add(reason === 'OOMKilling' ? 'OOMKilled' : reason, m.index, m.index + m[0].length);
  }
  const oom = /\bOOM(?:[- ]?kill(?:ed|s|ing)?)?\b|\bout[- ]of[- ]memory\b/i.exec(text);
  if (oom) add('OOMKilled', oom.index, oom.index + oom[0].length);
  const pull = /\bimage[- ]pull(?:ing)?\s+(?:fail|error|back)/i.exec(text);
  if (pull) add('ImagePullBackOff', pull.index, pull.index + pull[0].length);
  const state = /\b(?:reason|terminated|last state|state)\b[^.;\n]{0,25}?\b(Error|Completed)\b/.exec(text);
  if (state?.[1]) add(state[1], state.index, state.index + state[0].length);
}

const QUANTITY = /(?<![\w.])(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|m)\b/g;

/** "limit" or "request", whichever is said nearest the quantity (within its clause), if either. */
function nearestRole(text: string, at: number): 'limit' | 'request' | undefined {
  let best: { role: 'limit' | 'request'; distance: number } | undefined;
  for (const m of text.matchAll(/\b(limit|request)/gi)) {
    const distance = Math.abs((m.index ?? 0) - at);
    const between = text.slice(Math.min(at, m.index ?? 0), Math.max(at, m.index ?? 0));
    if (distance > 40 || /[;.]\s/.test(between)) continue;
    if (!best || distance < best.distance)
      best = { role: (m[1] ?? '').toLowerCase() as 'limit' | 'request', distance };
  }
  return best?.role;
}

/** The key values stated in `text`. */
export function keyValues(text: string): KeyValue[] {
  const out: KeyValue[] = [];
  reasons(text, out);
  for (const m of text.matchAll(
    /\bexit(?:ed|s)?(?:\s+(?:with|status))?(?:\s+code)?\s*[:=]?\s*(-?\d{1,3})\b|\bexitCode"?\s*:\s*(\d{1,3})\b/gi,
  )) {
    const code = m[1] ?? m[2];
    if (code && !out.some((v) => v.kind === 'exit code' && v.value === code))
      out.push({ kind: 'exit code', value: code });
  }
  const restarts =
    /\b(\d{1,6})\s+(?:restarts|times)\b|\brestart(?:ed)?\s+(\d{1,6})\s+times\b|\brestart\s*count\s*(?:of|:|=)?\s*(\d{1,6})\b|\bRESTARTS\s+(\d{1,6})\b/i.exec(
      text,
    );
  const restartCount = restarts?.slice(1).find((g) => g !== undefined);
  if (restartCount !== undefined) out.push({ kind: 'restart count', value: restartCount });
  for (const m of text.matchAll(QUANTITY)) {
    const unit = m[2] ?? '';
    const around = text
      .slice(Math.max(0, (m.index ?? 0) - 40), (m.index ?? 0) + m[0].length + 20)
      .toLowerCase();
    const resource = unit === 'm' ? 'cpu' : 'memory';
    if (unit === 'm' && !/\bcpu\b|millicore/.test(around)) continue;
    const role = nearestRole(text, m.index ?? 0);
    out.push({ kind: 'quantity', value: m[0], resource, ...(role ? { role } : {}) });
  }
  const image = /\bimage\b[^.;\n]{0,20}?[`"']?([a-z0-9][a-z0-9._/-]*:[A-Za-z0-9_][\w.-]*)/i.exec(text);
  if (image?.[1]) out.push({ kind: 'image', value: image[1] });
  for (const m of text.matchAll(/["“`]([^\s"“”`]{3,40})["”`]/g)) {
    const literal = m[1] ?? '';
    if (/[\p{N}_]|[A-Z]{2}/u.test(literal) && !out.some((v) => v.value === literal))
      out.push({ kind: 'literal', value: literal });
  }
  return out;
}

/** A quantity in base units (bytes, millicores). */
function amount(q: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|m|k|M|G)?$/.exec(q.trim());
  if (!m) return undefined;
  const scale: Record<string, number> = {
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    m: 1,
  };
  const n = Number(m[1]);
  return m[2] ? n * (scale[m[2]] ?? 1) : n * 1000;
}

interface Field {
  field: string;
  value: string;
  source: string;
}

/** The pods of `source` the claim is about; every pod when it names none the source holds. */
function podsAbout(source: ValueSource, subjects: readonly string[]): PodFacts[] {
  if (subjects.length === 0) return source.parsed.pods;
  const about = source.parsed.pods.filter((p) =>
    subjects.some((s) => p.name === s || p.name.startsWith(`${s}-`)),
  );
  return about;
}

const about = (line: string, subjects: readonly string[]) =>
  subjects.length === 0 || subjects.some((s) => line.includes(s));

function fieldsOf(value: KeyValue, sources: ValueSource[], subjects: readonly string[]): Field[] {
  const out: Field[] = [];
  for (const source of sources) {
    const pods = podsAbout(source, subjects);
    const add = (field: string, v: string | number | undefined) => {
      if (v !== undefined && v !== '') out.push({ field, value: String(v), source: source.label });
    };
    const each = (fn: (c: ContainerFacts, pod: PodFacts) => void) => {
      for (const pod of pods) for (const c of pod.containers) fn(c, pod);
    };
    if (value.kind === 'reason') {
      each((c) => {
        if (!value.terminal || c.state === 'Terminated') add(`${c.name} state reason`, c.reason);
        if (!value.terminal || c.lastState === 'Terminated') add(`${c.name} last state reason`, c.lastReason);
      });
      for (const pod of pods)
        if (pod.status && (!value.terminal || TERMINAL.includes(pod.status))) add('STATUS', pod.status);
      for (const e of source.parsed.events)
        if (about(e.object ?? '', subjects) && (!value.terminal || e.reason === 'OOMKilling'))
          add('event reason', e.reason);
    } else if (value.kind === 'exit code') {
      each((c) => {
        add(`${c.name} exit code`, c.exitCode);
        add(`${c.name} last state exit code`, c.lastExitCode);
      });
    } else if (value.kind === 'restart count') {
      each((c) => add(`${c.name} restart count`, c.restartCount));
      for (const pod of pods) add('RESTARTS', pod.restarts);
    } else if (value.kind === 'quantity') {
      each((c) => {
        const res = value.resource ?? 'memory';
        if (value.role !== 'request') add(`${c.name} ${res} limit`, c.limits[res]);
        if (value.role !== 'limit') add(`${c.name} ${res} request`, c.requests[res]);
      });
    } else if (value.kind === 'image') each((c) => add(`${c.name} image`, c.image));
  }
  return out;
}

const sameImage = (a: string, b: string) => a === b || a.endsWith(`/${b}`) || b.endsWith(`/${a}`);
const repo = (image: string) => image.replace(/[:@][^/]*$/, '');

function matches(value: KeyValue, actual: string): boolean {
  switch (value.kind) {
    case 'reason':
      return [value.value, ...(value.also ?? [])].some((r) => r.toLowerCase() === actual.toLowerCase());
    case 'quantity':
      return amount(value.value) === amount(actual);
    case 'image':
      return sameImage(value.value, actual);
    default:
      return value.value === actual;
  }
}

/** Whether the fields that hold this value disagree with it (rather than leave it unshown). */
function disagrees(value: KeyValue, fields: Field[]): Field[] {
  if (value.kind === 'reason') return value.terminal ? fields : [];
  if (value.kind === 'restart count') {
    const claimed = Number(value.value);
    return fields.every((f) => Math.abs(Number(f.value) - claimed) > Math.max(2, Number(f.value) / 5))
      ? fields
      : [];
  }
  if (value.kind === 'image') return fields.some((f) => repo(f.value) === repo(value.value)) ? fields : [];
  if (value.kind === 'quantity') return value.role ? fields : [];
  return fields;
}

/** The value against the outputs: confirmed by a field or a line, contradicted by the fields, or not shown. */
export function checkValue(value: KeyValue, sources: ValueSource[], subjects: readonly string[]): ValueCheck {
  const fields = fieldsOf(value, sources, subjects);
  const hit = fields.find((f) => matches(value, f.value));
  if (hit) return { kind: 'confirmed', value, source: hit.source };
  // Unparsed output (logs, other kinds): the value on a line about the subject.
  const words = [value.value, ...(value.also ?? [])].map((w) => w.toLowerCase());
  for (const source of sources) {
    const single =
      source.names.length > 0 && (subjects.length === 0 || source.names.some((n) => about(n, subjects)));
    for (const line of source.lines()) {
      const lower = line.toLowerCase();
      if ((single || about(line, subjects)) && words.some((w) => lineHolds(lower, w, value.kind)))
        return { kind: 'confirmed', value, source: source.label };
    }
  }
  const against = disagrees(value, fields);
  const first = against[0];
  if (first)
    return {
      kind: 'contradicted',
      value,
      field: first.field,
      actual: [
        ...new Set(
          against.filter((f) => f.field === first.field || f.source === first.source).map((f) => f.value),
        ),
      ].join(', '),
      source: first.source,
    };
  return { kind: 'unknown', value };
}

/** A value on an unparsed line: an exit code next to its label, anything else as a word. */
function lineHolds(line: string, word: string, kind: ValueKind): boolean {
  if (kind === 'exit code') return new RegExp(`exit ?code"?:? ${word}\\b|exitcode"?: ?${word}\\b`).test(line);
  if (kind === 'restart count') return false;
  const at = line.indexOf(word);
  if (at < 0) return false;
  const before = line[at - 1] ?? ' ';
  const after = line[at + word.length] ?? ' ';
  return !/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after);
}
