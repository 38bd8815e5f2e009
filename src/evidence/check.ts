import type { Evidence } from '../workspace/run-record.js';
import type { ClusterCallRecord } from '../kubectl/broker/calls.js';
import type { CallOutputRecord } from '../kubectl/broker/outputs.js';
import { parseKubectl, type KubectlCommand } from '../kubectl/parse.js';
import { readClaims } from './claims.js';
import { callGaps } from './gaps.js';
import { covers, parseCited } from './match.js';

// The evidence check: the report's claims (src/evidence/claims.ts) against what the run recorded —
// every cluster call with its decision and exit code (cluster-calls.jsonl), what each allowed call
// returned (cluster-outputs.jsonl) and the triage output. Deterministic and local: no model judges it.

export interface EvidenceInput {
  report: string;
  calls: ClusterCallRecord[];
  outputs: CallOutputRecord[];
  /** The triage script's output (its log and products), also searched for quoted lines. */
  triageText?: string;
  /** Why the calls were not recorded (the guard was off, the engine cannot reach a broker). */
  unrecorded?: string;
  /** Gaps known before the agent ran: an unreachable cluster, a cut triage output. */
  knownGaps?: string[];
}

/** Entries kept per list in result.json (the counts are exact; the record has everything). */
export const MAX_LISTED = 50;
const MAX_ENTRY_CHARS = 240;

const clip = (text: string): string =>
  text.length <= MAX_ENTRY_CHARS ? text : `${text.slice(0, MAX_ENTRY_CHARS - 1)}…`;

function listed(entries: string[]): string[] {
  const unique = [...new Set(entries.map(clip))];
  if (unique.length <= MAX_LISTED) return unique;
  return [...unique.slice(0, MAX_LISTED - 1), `…and ${unique.length - MAX_LISTED + 1} more`];
}

type CallStatus = 'succeeded' | 'failed' | 'refused' | 'never run';

interface ParsedCall {
  record: ClusterCallRecord;
  command: KubectlCommand;
}

/** The recorded calls by verb, and by verb and first name for the citations that name one. */
class CallIndex {
  private readonly byVerb = new Map<string, ParsedCall[]>();
  private readonly byName = new Map<string, ParsedCall[]>();

  constructor(records: ClusterCallRecord[]) {
    for (const record of records) {
      if (record.tool !== 'kubectl') continue;
      const call = { record, command: parseKubectl(record.argv) };
      push(this.byVerb, call.command.verb ?? '', call);
      for (const target of call.command.targets)
        for (const name of target.names) push(this.byName, `${call.command.verb ?? ''}\u0000${name}`, call);
    }
  }

  /** What happened to a cited command: the best outcome among the recorded calls it describes. */
  statusOf(cited: KubectlCommand): CallStatus {
    const name = cited.targets.find((t) => t.names.length > 0)?.names[0];
    const candidates =
      (name === undefined
        ? this.byVerb.get(cited.verb ?? '')
        : this.byName.get(`${cited.verb ?? ''}\u0000${name}`)) ?? [];
    let status: CallStatus = 'never run';
    for (const call of candidates) {
      if (!covers(call.command, cited)) continue;
      if (call.record.decision === 'refused') {
        if (status === 'never run') status = 'refused';
      } else if (call.record.exitCode === 0) return 'succeeded';
      else status = 'failed';
    }
    return status;
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

const collapse = (line: string): string => line.replace(/\s+/g, ' ').trim();

/**
 * Every recorded output line, whitespace collapsed. A quoted line is found when it is a recorded line
 * or part of one; the part-of search looks only at the lines holding one whole word of the quote.
 */
class OutputIndex {
  private readonly exact = new Set<string>();

  add(text: string): void {
    for (const raw of text.split('\n')) {
      const line = collapse(raw);
      if (line) this.exact.add(line);
    }
  }

  /** The quoted lines no recorded line holds. */
  missing(excerpts: string[]): string[] {
    const rest = excerpts.filter((e) => !this.exact.has(e));
    if (rest.length === 0) return [];
    // The first and last words may be cut mid-word; those between are whole words of the line.
    const keyOf = (e: string): string | undefined => {
      const inner = e.split(' ').slice(1, -1);
      return inner.length === 0 ? undefined : inner.reduce((a, b) => (b.length > a.length ? b : a));
    };
    const wanted = new Map<string, string[]>();
    for (const e of rest) {
      const key = keyOf(e);
      if (key !== undefined) wanted.set(key, []);
    }
    const lines = [...this.exact];
    for (const line of lines)
      for (const word of line.split(' ')) {
        const list = wanted.get(word);
        if (list && list.at(-1) !== line) list.push(line);
      }
    return rest.filter((e) => {
      const key = keyOf(e);
      const pool = key === undefined ? lines : (wanted.get(key) ?? []);
      return !pool.some((line) => line.includes(e));
    });
  }
}

export function checkEvidence(input: EvidenceInput): Evidence {
  const claims = readClaims(input.report);
  const outputs = new Map(input.outputs.map((o) => [o.call, o]));
  const calls = new CallIndex(input.calls);

  let verified = 0;
  const unverified: string[] = [];
  const citedNotRun: string[] = [];
  const seen = new Set<string>();
  for (const cited of claims.commands) {
    const command = parseCited(cited.text);
    if (!command) continue;
    const key = `${command.normalized}\u0000${cited.where}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const status = calls.statusOf(command);
    if (status === 'succeeded') verified++;
    else if (status === 'never run' && input.unrecorded)
      // The agent's own calls were not recorded: absent from the record is not "never run".
      unverified.push(
        `${cited.text} (${cited.where}): not in the record (the agent's calls were not recorded)`,
      );
    else if (status === 'never run') citedNotRun.push(`${cited.text} (${cited.where})`);
    else
      unverified.push(
        `${cited.text} (${cited.where}): ${status === 'refused' ? 'refused' : 'ran and failed'}`,
      );
  }

  const index = new OutputIndex();
  for (const output of input.outputs) {
    index.add(output.stdout);
    index.add(output.stderr);
  }
  if (input.triageText) index.add(input.triageText);
  const quoted = new Map<string, string>();
  for (const excerpt of claims.excerpts)
    if (!quoted.has(excerpt.text)) quoted.set(excerpt.text, excerpt.where);
  const missing = index.missing([...quoted.keys()]);
  verified += quoted.size - missing.length;
  const excerptsNotFound = missing.map((text) => `${text} (${quoted.get(text) ?? 'the report'})`);

  const facts = new Set(claims.facts);
  for (const inference of claims.inferences) {
    const missing = inference.cites.filter((id) => !facts.has(id));
    if (missing.length > 0)
      unverified.push(`${inference.id} cites ${missing.join(', ')}, which the report does not state`);
    if (inference.cites.length === 0) unverified.push(`${inference.id} cites no fact`);
  }

  const gaps = [...(input.knownGaps ?? [])];
  const triageCalls = input.calls.filter((c) => c.by === 'triage').length;
  if (input.unrecorded && triageCalls > 0)
    gaps.push(
      `the agent's cluster calls were not recorded (${input.unrecorded}); only the triage script's ${triageCalls} call${triageCalls === 1 ? ' was' : 's were'}, so commands the agent ran cannot be checked`,
    );
  else if (input.unrecorded)
    gaps.push(`cluster calls were not recorded (${input.unrecorded}): citations cannot be checked`);
  gaps.push(...callGaps(input.calls, outputs));
  const cut = input.outputs.filter((o) => o.cut).length;
  if (cut > 0)
    gaps.push(`the recorded output of ${cut} call${cut === 1 ? ' was' : 's were'} cut at its size bound`);

  const successfulRead = input.calls.some((c) => c.decision === 'allowed' && c.exitCode === 0);
  const citations = seen.size + quoted.size;
  let verdict: Evidence['verdict'];
  if (!successfulRead || (citations > 0 && verified * 2 < citations)) verdict = 'ungrounded';
  else if (citations === 0 || citedNotRun.length + excerptsNotFound.length + unverified.length > 0)
    verdict = 'partial';
  else verdict = 'grounded';
  if (!successfulRead) gaps.push('no cluster read succeeded during the run');
  if (citations === 0) gaps.push('the report cites no command and quotes no output');

  return {
    verdict,
    facts: facts.size,
    verified,
    unverified: listed(unverified),
    citedNotRun: listed(citedNotRun),
    excerptsNotFound: listed(excerptsNotFound),
    gaps: listed(gaps),
  };
}
