import type { Evidence, EvidenceClaim } from '../workspace/run-record.js';
import type { ClusterCallRecord } from '../kubectl/broker/calls.js';
import type { CallOutputRecord } from '../kubectl/broker/outputs.js';
import { NO_HYPOTHESIS } from '../report/headline.js';
import { CallIndex } from './calls.js';
import { judgeChain } from './chain.js';
import { readClaims } from './claims.js';
import { callGaps } from './gaps.js';
import { clip, judgeBlock, judgeFact, objectNames, type JudgeContext, type Judged } from './judge.js';
import { QuoteChecker } from './quote-check.js';
import { decideVerdict } from './verdict.js';

// The evidence check: the report's claims (claims.ts) — its headline, facts, inferences and quoted
// output — against what the run recorded: every cluster call with its decision and exit code
// (cluster-calls.jsonl), what each allowed call returned (cluster-outputs.jsonl), and, as a tier of its
// own that is never cluster evidence, the alert and the triage output. Deterministic and local.

export interface EvidenceInput {
  report: string;
  calls: ClusterCallRecord[];
  outputs: CallOutputRecord[];
  /** The triage script's output (its log and products): quotes found only there are from the triage. */
  triageText?: string;
  /** The incident as the producer wrote it (incident.json, the alert's text). */
  alertText?: string;
  /** Why the calls were not recorded (the guard was off, the engine cannot reach a broker). */
  unrecorded?: string;
  /** Gaps known before the agent ran: an unreachable cluster, a cut triage output. */
  knownGaps?: string[];
  /** What the access check said when it found the run's cluster unreachable. */
  unreachable?: string;
}

/** Entries kept per list in result.json (the counts are exact; the record has everything). */
export const MAX_LISTED = 50;

function listed(entries: string[]): string[] {
  const unique = [...new Set(entries.map(clip))];
  if (unique.length <= MAX_LISTED) return unique;
  return [...unique.slice(0, MAX_LISTED - 1), `…and ${unique.length - MAX_LISTED + 1} more`];
}

/** The headline first, then what does not hold (the chain's first), then the rest, at most MAX_LISTED. */
function ordered(claims: Judged[]): Judged[] {
  const rank = (j: Judged) =>
    j.kind === 'headline'
      ? 0
      : j.status !== 'supported' && j.status !== 'alert'
        ? j.chain
          ? 1
          : 2
        : j.chain
          ? 3
          : 4;
  return claims
    .map((j, i) => ({ j, i }))
    .sort((a, b) => rank(a.j) - rank(b.j) || a.i - b.i)
    .slice(0, MAX_LISTED)
    .map(({ j }) => j);
}

const recordOf = (j: Judged): EvidenceClaim => ({
  text: j.text,
  kind: j.kind,
  status: j.status,
  source: j.source,
  why: clip(j.why),
  ...(j.id ? { id: j.id } : {}),
  ...(j.chain ? { chain: true } : {}),
});

/** Bytes of a claim's cited output handed to the second reader. */
export const EXCERPT_BYTES = 2048;

/** What a claim rests on, for a reader of it: its cited calls' lines, those sharing its words first. */
function excerptOf(j: Judged): string {
  const words = new Set(
    (j.text.toLowerCase().match(/[a-z0-9][\w.:/-]{3,}/g) ?? []).map((w) => w.replace(/[.:]+$/, '')),
  );
  const lines = j.calls.flatMap((c) => [`$ ${c.label}`, ...c.lines()]);
  const score = (l: string) => [...words].filter((w) => l.toLowerCase().includes(w)).length;
  const ranked = lines
    .map((l, i) => ({ l, i, s: l.startsWith('$ ') ? 1000 : score(l) }))
    .sort((a, b) => b.s - a.s || a.i - b.i);
  const kept: { l: string; i: number }[] = [];
  let bytes = 0;
  for (const r of ranked) {
    const size = Buffer.byteLength(r.l) + 1;
    if (bytes + size > EXCERPT_BYTES) continue;
    kept.push(r);
    bytes += size;
  }
  return kept
    .sort((a, b) => a.i - b.i)
    .map((r) => r.l)
    .join('\n');
}

export function checkEvidence(input: EvidenceInput): Evidence {
  return checkClaims(input).evidence;
}

/** The evidence, and for each listed claim (by its index) the output it cites (≤ EXCERPT_BYTES), for a second reader. */
export function checkClaims(input: EvidenceInput): { evidence: Evidence; excerpt: (i: number) => string } {
  const claims = readClaims(input.report);
  const index = new CallIndex(input.calls, input.outputs);
  const unrecorded = input.unrecorded !== undefined;
  const ctx: JudgeContext = {
    index,
    quotes: new QuoteChecker(index, [input.alertText ?? '', input.triageText ?? ''].join('\n'), unrecorded),
    objects: objectNames(index.objectNames()),
    unrecorded,
  };

  const facts = new Map(claims.facts.map((f) => [f.id, judgeFact(f, ctx)]));
  const { headline, inferences, chain } = judgeChain(claims, facts, ctx);
  const blocks = claims.blocks.map((b) => judgeBlock(b, ctx)).filter((b): b is Judged => b !== undefined);
  for (const j of [...facts.values(), ...inferences]) if (j.id && chain.has(j.id)) j.chain = true;
  const all = [headline, ...facts.values(), ...inferences, ...blocks];

  let verified = 0;
  const unverified: string[] = [];
  const citedNotRun: string[] = [];
  const seen = new Set<string>();
  for (const cited of claims.commands) {
    const key = `${cited.text}\u0000${cited.where}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const resolved = index.resolve(cited.text);
    if (!resolved) continue;
    if (resolved.status === 'succeeded') verified++;
    else if (resolved.status === 'never run' && unrecorded)
      unverified.push(
        `${cited.text} (${cited.where}): not in the record (the agent's calls were not recorded)`,
      );
    else if (resolved.status === 'never run')
      // A call with other flags or targets may have run: it is named, so the line is not read as "never ran".
      citedNotRun.push(
        `${cited.text} (${cited.where})${resolved.nearest ? `; \`${resolved.nearest.label}\` ran` : ''}`,
      );
    else
      unverified.push(
        `${cited.text} (${cited.where}): ${resolved.status === 'refused' ? 'refused' : 'ran and failed'}`,
      );
  }
  verified += all.reduce((n, j) => n + j.found, 0);
  for (const j of all)
    if (j.status === 'contradicted' || j.status === 'unsupported' || j.status === 'unchecked')
      unverified.push(`${j.id ?? j.kind} ${j.status}: ${j.why}`);
  const excerptsNotFound = all.flatMap((j) =>
    j.missing.map((m) => `${m} (${j.kind === 'quote' ? (j.id ?? 'the report') : (j.id ?? j.kind)})`),
  );

  const gaps = [...(input.knownGaps ?? [])];
  const triageCalls = input.calls.filter((c) => c.by === 'triage').length;
  if (input.unrecorded && triageCalls > 0)
    gaps.push(
      `the agent's cluster calls were not recorded (${input.unrecorded}); only the triage script's ${triageCalls} call${triageCalls === 1 ? ' was' : 's were'}, so commands the agent ran cannot be checked`,
    );
  else if (input.unrecorded)
    gaps.push(`cluster calls were not recorded (${input.unrecorded}): citations cannot be checked`);
  gaps.push(...callGaps(input.calls, new Map(input.outputs.map((o) => [o.call, o]))));
  const cut = input.outputs.filter((o) => o.cut).length;
  if (cut > 0)
    gaps.push(`the recorded output of ${cut} call${cut === 1 ? ' was' : 's were'} cut at its size bound`);
  const serverRead = index.serverRead();
  if (!serverRead) gaps.push('no cluster read succeeded during the run');

  const cites =
    claims.commands.length > 0 ||
    claims.blocks.length > 0 ||
    claims.facts.some((f) => f.sources.length + f.quotes.length + f.tiers.length > 0);
  const outcome = decideVerdict({
    headline,
    claims: all,
    ...(input.unreachable ? { unreachable: input.unreachable } : {}),
    serverRead,
    onlyLocalReads: index.succeeded().length > 0,
    cites,
    citedNotRun: citedNotRun.length,
  });
  if (!cites) gaps.push('the report cites no command and quotes no output');

  const listedClaims = ordered(all);
  const evidence: Evidence = {
    verdict: outcome.verdict,
    facts: claims.facts.length,
    verified,
    unverified: listed(unverified),
    citedNotRun: listed(citedNotRun),
    excerptsNotFound: listed(excerptsNotFound),
    gaps: listed(gaps),
    headline: claims.headline ? clip(claims.headline.statement) : NO_HYPOTHESIS,
    ...(claims.headline?.confidence ? { confidence: clip(claims.headline.confidence) } : {}),
    claims: listedClaims.map(recordOf),
    claimsSupported: all.filter((j) => j.status === 'supported').length,
    claimsTotal: all.length,
    reason: clip(outcome.reason),
    clusterRead: serverRead && !input.unreachable,
    checks: ['deterministic'],
  };
  // Read only by the second reader: made when it asks.
  return { evidence, excerpt: (i) => (listedClaims[i] ? excerptOf(listedClaims[i]) : '') };
}
