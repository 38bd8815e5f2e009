// Tolerant readers for what agent CLIs print: one JSON document, JSON lines, or a JSON object
// somewhere in text (Gemini prints its error object after free-form lines on stderr). They never
// throw: garbage, truncated or huge output yields "nothing found", and the adapter reports it.

/** Parse limit: beyond this a CLI's output is treated as unreadable rather than parsed. */
export const MAX_PARSE_CHARS = 256 * 1024 * 1024;
/** How many candidate start positions `findJsonObject` tries, newest first (bounds the work on garbage). */
const MAX_CANDIDATES = 64;

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `JSON.parse` that returns undefined instead of throwing. */
export function tryParseJson(text: string): unknown {
  if (text.length === 0 || text.length > MAX_PARSE_CHARS) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Each line that parses as a JSON object; other lines are counted, not thrown on. */
export function parseJsonLines(text: string): { records: JsonRecord[]; invalidLines: number } {
  const records: JsonRecord[] = [];
  let invalidLines = 0;
  if (text.length > MAX_PARSE_CHARS) return { records, invalidLines: 1 };
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.length === 0) continue;
    const value = trimmed.startsWith('{') ? tryParseJson(trimmed) : undefined;
    if (isRecord(value)) records.push(value);
    else invalidLines += 1;
  }
  return { records, invalidLines };
}

/**
 * The last JSON object in `text`: the whole text if it is one, else the last line-initial `{` from
 * which the rest of the text parses. Returns undefined when there is none.
 */
export function findJsonObject(text: string): JsonRecord | undefined {
  const whole = tryParseJson(text.trim());
  if (isRecord(whole)) return whole;
  if (text.length > MAX_PARSE_CHARS) return undefined;
  let end = text.length;
  for (let tries = 0; tries < MAX_CANDIDATES; tries++) {
    const start = text.lastIndexOf('\n{', end - 1);
    const at = start === -1 ? (text.startsWith('{') ? 0 : -1) : start + 1;
    if (at === -1) return undefined;
    const value = tryParseJson(text.slice(at).trim());
    if (isRecord(value)) return value;
    if (at === 0) return undefined;
    end = start;
  }
  return undefined;
}

/** A finite non-negative number at `value`, else 0 (usage fields may be missing or null). */
export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** The property `key` of `value` when `value` is an object. */
export function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}
