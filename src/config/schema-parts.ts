import { z } from '../shared/zod.js';
import { formatDuration, parseBytes, parseDuration } from './duration.js';

// The value types configuration keys are made of (durations, sizes, bounded integers, secret names,
// URLs), shared by the schema's files.

/** Timers longer than 2^31-1 ms fire at once in Node.js, so no duration may exceed 24 days. */
const MAX_DURATION_MS = 24 * 86_400_000;
const MAX_DURATION_TEXT = '24d';

/**
 * A duration (`30s`, `15m`, `1h` or milliseconds), parsed to milliseconds. At most what a Node.js timer
 * can wait, unless `maxMs` says otherwise (an age compared with dates, such as a retention period).
 */
export const duration = (fallback: string, description: string, maxMs = MAX_DURATION_MS) =>
  z
    .union([z.string(), z.number()])
    .transform((value, ctx) => {
      const ms = parseDuration(value);
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: 'expected a duration such as 30s, 15m, 1h or milliseconds' });
        return z.NEVER;
      }
      if (ms > maxMs) {
        ctx.addIssue({
          code: 'custom',
          message:
            maxMs === MAX_DURATION_MS
              ? `expected at most ${MAX_DURATION_TEXT} (the longest timer Node.js can set)`
              : `expected at most ${formatDuration(maxMs)}`,
        });
        return z.NEVER;
      }
      return ms;
    })
    .prefault(fallback)
    .describe(description);

/** A byte size (`512`, `64k`, `1MiB`), parsed to bytes. */
export const bytes = (fallback: string, description: string) =>
  z
    .union([z.string(), z.number()])
    .transform((value, ctx) => {
      const n = parseBytes(value);
      if (n === undefined) {
        ctx.addIssue({ code: 'custom', message: 'expected a size such as 512, 64k, 1MiB or 2g' });
        return z.NEVER;
      }
      return n;
    })
    .prefault(fallback)
    .describe(description);

export const int = (min: number, max: number) => z.number().int().min(min).max(max);

export const SECRET_NAME = /^[A-Z_][A-Z0-9_]*$/;
export const secretName = (description: string) =>
  z
    .string()
    .regex(SECRET_NAME, 'the name of an entry under secrets: (e.g. SLACK_BOT_TOKEN)')
    .describe(description);
export const httpUrl = (description: string) =>
  z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).describe(description);
