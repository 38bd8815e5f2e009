// The one reader of the confidence an agent gives its answer, for every part that asks: the headline
// (src/report/headline.ts), the notification summary, responders' accuracy (confident-wrong) and the
// eval scorer. Agents write it many ways: "Confidence: Very High", "(confidence 85%)", "confidence
// level: high", "we have high confidence that …", "High confidence", "90% confident", "0.85", and a
// bold `**Confidence:** High` on its own line (the headline module finds that line; this reads it).

/** A level word as agents write it, optionally "very". */
const LEVEL = String.raw`(?:very\s+)?(?:high|medium|moderate|low)`;
/** A level, a percentage or a fraction of one. */
const VALUE = String.raw`(${LEVEL}|\d{1,3}(?:\.\d+)?\s*%|0?\.\d+|1(?:\.0+)?)(?![\p{L}\p{N}])`;

/** "Confidence: High", "confidence level - 85%", "Confidence (Very High)", "confidence is low". */
const LABELLED = new RegExp(
  String.raw`\bconfidence(?:\s+level)?\s*(?:[:：=(\-–—]\s*|\s+is\s+|\s+)(?:\*\*)?${VALUE}`,
  'iu',
);
/** "high confidence", "very high-confidence", "85% confident", "we are highly confident". */
const BEFORE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(${LEVEL}|\d{1,3}(?:\.\d+)?\s*%)(?:\s*[-–]\s*|\s+)confiden(?:ce|t)\b`,
  'iu',
);
const HIGHLY = /\bhighly\s+confident\b/i;

interface Found {
  at: number;
  end: number;
  value: string;
  /** "we have high confidence that X": the statement follows the mention. */
  leads: boolean;
}

function find(text: string): Found | undefined {
  const found: Found[] = [];
  const labelled = LABELLED.exec(text);
  if (labelled?.[1])
    found.push({
      at: labelled.index,
      end: labelled.index + labelled[0].length,
      value: labelled[1],
      leads: false,
    });
  const before = BEFORE.exec(text);
  if (before?.[1]) {
    const end = before.index + before[0].length;
    const leads = /^\s*(?:that|:)\s/i.test(text.slice(end)) || /^\s*that\b/i.test(text.slice(end));
    found.push({ at: before.index, end, value: before[1], leads });
  }
  const highly = HIGHLY.exec(text);
  if (highly)
    found.push({ at: highly.index, end: highly.index + highly[0].length, value: 'high', leads: false });
  return found.sort((a, b) => a.at - b.at)[0];
}

/** The confidence a text states, as written ("Very High", "85%", "high"), if any. */
export function confidenceIn(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const found = find(text);
  return found ? found.value.replace(/\s+/g, ' ').trim() : undefined;
}

/**
 * "Pods restart because … — Confidence: High" → the statement and "High"; "We have high confidence
 * that the pod …" → "the pod …" and "high". Without a confidence, the text is the statement.
 */
export function splitConfidence(text: string): { statement: string; confidence?: string } {
  const found = find(text);
  if (!found) return { statement: text };
  const confidence = found.value.replace(/\s+/g, ' ').trim();
  let statement: string;
  if (found.leads) {
    statement = text.slice(found.end).replace(/^\s*(?:that\b|:)\s*/i, '');
  } else {
    const before = text
      .slice(0, found.at)
      .replace(/(?:\b(?:with|at|we have|i have|we are|i am)\s*)+$/i, '')
      .replace(/[\s—–\-(,;:|[*]+$/u, '');
    // "Confidence: High. The pod …": nothing before, the statement is what follows.
    statement = before.trim() ? before : text.slice(found.end).replace(/^[\s)\].,;:—–-]+/u, '');
  }
  return { statement: statement.trim(), confidence };
}

/** Whether a confidence as agents write it is high: "high", "very high", at least 80 %, or at least 0.8. */
export function isHighConfidence(confidence: string | undefined): boolean {
  if (!confidence) return false;
  const text = confidence.trim().toLowerCase();
  if (/^(?:very\s+)?high\b/.test(text)) return true;
  const percent = /^(\d{1,3}(?:\.\d+)?)\s*%/.exec(text);
  if (percent) return Number(percent[1]) >= 80;
  const fraction = /^(0?\.\d+|0|1(?:\.0+)?)$/.exec(text);
  if (fraction) return Number(fraction[1]) >= 0.8;
  return false;
}
