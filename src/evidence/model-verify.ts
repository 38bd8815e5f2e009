import type { Evidence, EvidenceClaim } from '../workspace/run-record.js';

// The optional second reader (`evidence.verify: model`): each claim the deterministic check found
// supported is shown, with at most 2 KB of the output it cites, to a model that answers supported,
// contradicted or not enough information. It can only lower a verdict: a claim it contradicts or cannot
// find support for loses its support, and the verdict falls as the rules say (a contradicted headline
// or chain link: ungrounded; anything else: at most partial). The model is asked through an injected
// `ask` (the daemon's goes through the model gateway, run/evidence-model.ts).

export type ModelAnswer = 'supported' | 'contradicted' | 'not enough information';

/** Sends one prompt (system and user parts) and resolves to the model's text. */
export type AskModel = (prompt: { system: string; user: string }) => Promise<string>;

export const VERIFY_SYSTEM = [
  'You check one claim from an incident report against the kubectl output it cites.',
  'Judge only by the output shown; do not use outside knowledge about the cluster.',
  'Answer with one JSON object and nothing else: {"answer": "supported" | "contradicted" | "not enough information", "why": "<one sentence>"}.',
  'supported: the output shows what the claim says. contradicted: the output shows something else (name the field and both values).',
  'not enough information: the output neither shows nor contradicts it.',
].join('\n');

export function verifyPrompt(claim: EvidenceClaim, excerpt: string): { system: string; user: string } {
  return {
    system: VERIFY_SYSTEM,
    user: `<claim kind="${claim.kind}">\n${claim.text}\n</claim>\n<cited_output>\n${excerpt || '(none)'}\n</cited_output>`,
  };
}

/** The model's answer and its reason; undefined when the text holds none (the claim is left as it was). */
export function readAnswer(text: string): { answer: ModelAnswer; why: string } | undefined {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  let answer = '';
  let why = '';
  if (json) {
    try {
      const value = JSON.parse(json) as { answer?: unknown; why?: unknown };
      answer = typeof value.answer === 'string' ? value.answer : '';
      why = typeof value.why === 'string' ? value.why : '';
    } catch {
      // not JSON: read the words below
    }
  }
  const said = (answer || text).toLowerCase();
  const found: ModelAnswer | undefined = /contradict/.test(said)
    ? 'contradicted'
    : /not enough|insufficient|cannot tell|unknown/.test(said)
      ? 'not enough information'
      : /support/.test(said)
        ? 'supported'
        : undefined;
  return found ? { answer: found, why: why.slice(0, 300) } : undefined;
}

export interface ModelReading {
  /** Claims read, and what the model said of each it did not support. */
  read: number;
  lowered: { claim: EvidenceClaim; answer: ModelAnswer; why: string }[];
  /** Claims the model could not be asked about (the call failed, the answer was unreadable). */
  failed: string[];
}

const order = { grounded: 2, partial: 1, ungrounded: 0 } as const;

/** The evidence after the model's reading: lower or equal, never higher. */
export function lowered(evidence: Evidence, reading: ModelReading): Evidence {
  const claims = (evidence.claims ?? []).map((claim) => {
    const hit = reading.lowered.find((l) => l.claim === claim);
    if (!hit) return claim;
    return {
      ...claim,
      status: hit.answer === 'contradicted' ? ('contradicted' as const) : ('unsupported' as const),
      why: `the model reader: ${hit.answer}${hit.why ? ` — ${hit.why}` : ''} (the deterministic check had: ${claim.why})`.slice(
        0,
        480,
      ),
    };
  });
  const chainContradicted = reading.lowered.some(
    (l) => l.answer === 'contradicted' && (l.claim.chain || l.claim.kind === 'headline'),
  );
  let verdict = evidence.verdict;
  let reason = evidence.reason;
  if (chainContradicted) {
    verdict = 'ungrounded';
    reason = 'the model reader found the headline or the chain behind it contradicted by the output it cites';
  } else if (reading.lowered.length > 0 && order[verdict] > order.partial) {
    verdict = 'partial';
    reason = `the model reader did not find support for ${reading.lowered.length} claim${reading.lowered.length === 1 ? '' : 's'}`;
  }
  const gaps =
    reading.failed.length > 0
      ? [
          ...evidence.gaps,
          `the model reader could not read ${reading.failed.length} claim(s): ${reading.failed[0]}`,
        ]
      : evidence.gaps;
  return {
    ...evidence,
    verdict,
    ...(reason ? { reason } : {}),
    claims,
    claimsSupported: (evidence.claimsSupported ?? 0) - reading.lowered.length,
    unverified: [
      ...evidence.unverified,
      ...reading.lowered.map((l) => `${l.claim.id ?? l.claim.kind} (model reader): ${l.answer}`),
    ],
    gaps,
    checks: ['deterministic', 'model'],
  };
}

/** Asks the model about each supported claim (the headline and its chain first, `max` at most). */
export async function readWithModel(
  evidence: Evidence,
  excerpt: (i: number) => string,
  ask: AskModel,
  max: number,
): Promise<Evidence> {
  const reading: ModelReading = { read: 0, lowered: [], failed: [] };
  const claims = evidence.claims ?? [];
  const asked = claims
    .map((claim, i) => ({ claim, i }))
    .filter(({ claim }) => claim.status === 'supported' && claim.kind !== 'inference')
    .sort(
      (a, b) =>
        Number(b.claim.kind === 'headline') - Number(a.claim.kind === 'headline') ||
        Number(b.claim.chain ?? false) - Number(a.claim.chain ?? false),
    )
    .slice(0, max);
  for (const { claim, i } of asked) {
    let text: string;
    try {
      text = await ask(verifyPrompt(claim, excerpt(i)));
    } catch (err) {
      reading.failed.push(`${claim.id ?? claim.kind}: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    const answer = readAnswer(text);
    reading.read++;
    if (!answer) reading.failed.push(`${claim.id ?? claim.kind}: the answer named no verdict`);
    else if (answer.answer !== 'supported') reading.lowered.push({ claim, ...answer });
  }
  return lowered(evidence, reading);
}
