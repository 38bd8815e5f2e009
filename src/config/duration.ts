// Durations in configuration accept `30s`, `15m`, `1h`, `2d`, `500ms` or a bare number of milliseconds.
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_RE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/;

/** Parses a duration; returns undefined when the text is not one. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  const match = DURATION_RE.exec(value.trim());
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = match[2] ?? 'ms';
  return Math.round(amount * (UNIT_MS[unit] ?? 1));
}

/** Renders milliseconds in the largest unit that divides them exactly (900000 → `15m`). */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit] ?? 1;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

// Byte sizes accept `512`, `64k`, `1MiB`, `2g` (binary units).
const SIZE_RE = /^(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)?$/i;
const SIZE_MULT: Record<string, number> = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** Parses a byte size; returns undefined when the text is not one. */
export function parseBytes(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  const match = SIZE_RE.exec(value.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? 'b').toLowerCase().charAt(0);
  return Math.round(Number(match[1]) * (SIZE_MULT[unit] ?? 1));
}
