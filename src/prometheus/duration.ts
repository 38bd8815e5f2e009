// Durations and times as Prometheus writes them: `5m`, `1h30m`, `2d`, `1w`; times as RFC 3339, Unix
// seconds, `now` or so long before it (`now-15m`, `-15m`).

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  y: 365 * 86_400_000,
};
const PART = /(\d+)(ms|s|m|h|d|w|y)/gy;

/** Milliseconds of a Prometheus duration (`1h30m`), or undefined when the text is not one. */
export function parsePromDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let end = 0;
  for (let m = PART.exec(trimmed); m; m = PART.exec(trimmed)) {
    total += Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? 0);
    end = PART.lastIndex;
  }
  return end === trimmed.length && Number.isSafeInteger(total) ? total : undefined;
}

/** `5400000` → `1h30m`, `2592000000` → `30d`: a duration as a person writes it. */
export function formatPromDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const size = UNIT_MS[unit] ?? 1;
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}

/** A time on the command line: `{at}` (absolute ms) or `{ago}` (ms before the call); undefined when unreadable. */
export function parseTime(text: string): { at: number } | { ago: number } | undefined {
  const t = text.trim();
  if (t === 'now') return { ago: 0 };
  const relative = /^(?:now)?-(.+)$/.exec(t);
  if (relative) {
    const ago = parsePromDuration(relative[1] ?? '');
    return ago === undefined ? undefined : { ago };
  }
  if (/^\d+(\.\d+)?$/.test(t)) return { at: Math.round(Number(t) * 1000) };
  // RFC 3339 only (a date and a time with its zone), not whatever Date.parse accepts.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(t)) return undefined;
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : { at };
}

/** The absolute time of a spec at `now` (ms). */
export const resolveTime = (spec: { at: number } | { ago: number } | undefined, now: number): number =>
  spec === undefined ? now : 'at' in spec ? spec.at : now - spec.ago;
