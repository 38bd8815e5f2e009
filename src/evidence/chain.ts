import { NO_HYPOTHESIS } from '../report/headline.js';
import type { RecordedCall } from './calls.js';
import type { InferenceClaim, ReportClaims } from './claims.js';
import {
  clip,
  speaksOf,
  subjectsOf,
  tellingWords,
  type JudgeContext,
  type Judged,
  type Status,
} from './judge.js';
import { checkValue, keyValues, type KeyValue, type ValueCheck } from './values.js';

// The chain behind the headline: the headline rests on the facts and inferences it cites, an inference
// on the facts (and inferences) it cites, a fact on the cluster output it cites. A link that is
// contradicted contradicts what rests on it; one that is unsupported leaves it unsupported. The
// headline's own values (a reason it blames, an exit code, a limit) are compared with the output the
// chain rests on, for the pods the headline names: blaming OOM where the cited pod's last state says
// Error, exit 1, contradicts it.

/** Reasons that are a cause, not a symptom: a headline naming one needs output that shows it. */
const BLAMED = new Set([
  'OOMKilled',
  'ImagePullBackOff',
  'ErrImagePull',
  'FailedScheduling',
  'FailedMount',
  'FailedAttachVolume',
  'Unhealthy',
  'Evicted',
  'CreateContainerConfigError',
  'InvalidImageName',
  'NodeNotReady',
  'DeadlineExceeded',
  'ContainerCannotRun',
]);

interface Link {
  status: Status;
  why: string;
  calls: RecordedCall[];
  root?: { id: string; why: string };
}

export interface ChainResult {
  headline: Judged;
  inferences: Judged[];
  /** Ids of the facts and inferences the headline rests on, directly or through inferences. */
  chain: Set<string>;
}

export function judgeChain(claims: ReportClaims, facts: Map<string, Judged>, ctx: JudgeContext): ChainResult {
  const inferences = new Map(claims.inferences.map((i) => [i.id, i]));
  const judged = new Map<string, Judged>();
  const visiting = new Set<string>();

  const lookup = (id: string): Judged | undefined => {
    const fact = facts.get(id);
    if (fact) return fact;
    const inference = inferences.get(id);
    if (!inference) return undefined;
    const done = judged.get(id);
    if (done) return done;
    if (visiting.has(id)) return undefined;
    visiting.add(id);
    const link = aggregate(inference.cites, lookup, 'an inference');
    const result: Judged = {
      text: clip(inference.text),
      kind: 'inference',
      id,
      source: inference.cites.join(', '),
      status: link.status,
      why: link.why,
      calls: link.calls,
      missing: [],
      found: 0,
      ...(link.root ? { root: link.root } : {}),
    };
    judged.set(id, result);
    return result;
  };
  for (const inference of claims.inferences) lookup(inference.id);

  const chain = new Set<string>();
  const walk = (id: string): void => {
    if (chain.has(id)) return;
    chain.add(id);
    for (const next of inferences.get(id)?.cites ?? []) walk(next);
  };
  for (const id of claims.headline?.cites ?? []) walk(id);
  return {
    headline: judgeHeadline(claims, lookup, ctx),
    inferences: claims.inferences.map((i) => judged.get(i.id) ?? orphan(i)),
    chain,
  };
}

const orphan = (i: InferenceClaim): Judged => ({
  text: clip(i.text),
  kind: 'inference',
  id: i.id,
  source: i.cites.join(', '),
  status: 'unsupported',
  why: 'it cites itself through other inferences',
  calls: [],
  missing: [],
  found: 0,
});

/** What a claim resting on `ids` is worth. */
function aggregate(ids: string[], lookup: (id: string) => Judged | undefined, what: string): Link {
  if (ids.length === 0)
    return { status: 'unsupported', why: `${what} that cites no fact or inference`, calls: [] };
  const links = ids.map((id) => ({ id, j: lookup(id) }));
  const calls = [...new Set(links.flatMap((l) => l.j?.calls ?? []))];
  const absent = links.filter((l) => !l.j).map((l) => l.id);
  if (absent.length > 0)
    return {
      status: 'unsupported',
      why: `it cites ${absent.join(', ')}, which the report does not state`,
      calls,
    };
  const worst = (status: Status) => links.find((l) => l.j?.status === status);
  for (const status of ['contradicted', 'unsupported'] as const) {
    const bad = worst(status);
    if (!bad?.j) continue;
    const root = bad.j.root ?? { id: bad.id, why: bad.j.why };
    const via = root.id === bad.id ? '' : ` (through ${bad.id})`;
    const what = status === 'contradicted' ? 'which the cluster output contradicts' : 'which does not hold';
    return { status, why: clip(`it rests on ${root.id}${via}, ${what}: ${root.why}`), calls, root };
  }
  const unchecked = worst('unchecked');
  if (unchecked)
    return { status: 'unchecked', why: clip(`it rests on ${unchecked.id}, which cannot be checked`), calls };
  if (links.every((l) => l.j?.status === 'alert'))
    return {
      status: 'alert',
      why: 'it rests only on the alert and the triage output: no cluster evidence',
      calls,
    };
  return { status: 'supported', why: `it rests on ${ids.join(', ')}, which hold`, calls };
}

function judgeHeadline(
  claims: ReportClaims,
  lookup: (id: string) => Judged | undefined,
  ctx: JudgeContext,
): Judged {
  const headline = claims.headline;
  const base = { kind: 'headline' as const, chain: true, missing: [], found: 0 };
  if (!headline)
    return {
      ...base,
      text: NO_HYPOTHESIS,
      source: '',
      status: 'unsupported',
      why: 'the report states no hypothesis',
      calls: [],
    };
  const link = aggregate(headline.cites, lookup, 'a headline');
  const result = (status: Status, why: string): Judged => ({
    ...base,
    text: clip(headline.statement),
    source: headline.cites.join(', '),
    status,
    why,
    calls: link.calls,
  });
  if (link.status === 'contradicted' || (link.status === 'unsupported' && headline.cites.length === 0))
    return result(link.status, link.why);
  const statement = headline.statement.replace(/\[(?:FACT|INF)-\d+\]|\b(?:FACT|INF)-\d+\b/g, ' ');
  const subjects = subjectsOf(statement, ctx.objects);
  const sources = link.calls.map((c) => c.asSource());
  const values = keyValues(statement).filter(worthChecking);
  const checks = values.map((v) => checkValue(v, sources, subjects));
  const against = checks.find(
    (c): c is Extract<ValueCheck, { kind: 'contradicted' }> => c.kind === 'contradicted',
  );
  if (against)
    return result(
      'contradicted',
      `${against.field}: the headline says ${against.value.value}; \`${against.source}\` says ${against.actual}`,
    );
  if (link.status !== 'supported') return result(link.status, link.why);
  const blamed = checks.filter(
    (c) => c.kind === 'unknown' && c.value.kind === 'reason' && BLAMED.has(c.value.value),
  );
  if (blamed.length > 0)
    return result(
      'unsupported',
      `it blames ${blamed.map((c) => c.value.value).join(', ')}, which nothing it rests on shows${subjects.length > 0 ? ` for ${subjects.join(', ')}` : ''}`,
    );
  if (!checks.some((c) => c.kind === 'confirmed')) {
    const words = tellingWords(statement).filter((w) => !subjects.includes(w));
    const text = link.calls.map((c) => speaksOf(c, subjects)).join('\n');
    if (words.length > 0 && !words.some((w) => text.includes(w)))
      return result('unsupported', `nothing it rests on speaks of it (${words.slice(0, 5).join(', ')})`);
  }
  return result('supported', link.why);
}

/** The headline's values worth comparing: reasons, exit codes, limits and images (counts change). */
const worthChecking = (v: KeyValue): boolean => v.kind !== 'restart count' && v.kind !== 'literal';
