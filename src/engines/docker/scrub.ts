import { TransientError, errorMessage } from '../../util/errors.js';

// Engine errors with the run's secrets taken out: a create request's Env carries the API keys, and an
// engine may echo it back in its error.

/** Secret values shorter than this are not scrubbed from error text (they would mangle it). */
const MIN_SCRUB_LENGTH = 4;

/**
 * `err` with every secret value replaced by `[REDACTED]`: an engine error may echo the create request,
 * whose Env carries the API keys, and error text ends up in logs, result.json and state.json. The raw
 * cause is replaced by a scrubbed copy; transient-ness, code and HTTP status are kept.
 */
export function scrubSecrets(err: Error, secretEnv: Record<string, string>): Error {
  const values = Object.values(secretEnv)
    .filter((v) => v.length >= MIN_SCRUB_LENGTH)
    .sort((a, b) => b.length - a.length);
  if (values.length === 0) return err;
  const scrub = (text: string) => values.reduce((t, v) => t.split(v).join('[REDACTED]'), text);
  const cause = err.cause as (Error & { statusCode?: number; json?: unknown }) | undefined;
  const texts = [err.message, err.stack ?? '', cause === undefined ? '' : errorMessage(cause)];
  for (const e of [err as { json?: unknown }, cause]) {
    if (e?.json !== undefined) texts.push(typeof e.json === 'string' ? e.json : JSON.stringify(e.json));
  }
  if (!texts.some((t) => values.some((v) => t.includes(v)))) return err;
  const cleanCause =
    cause === undefined
      ? undefined
      : Object.assign(new Error(scrub(errorMessage(cause))), {
          ...(cause.statusCode !== undefined ? { statusCode: cause.statusCode } : {}),
        });
  const statusCode = (err as { statusCode?: number }).statusCode;
  const clean =
    err instanceof TransientError
      ? new TransientError(scrub(err.message), {
          ...(cleanCause ? { cause: cleanCause } : {}),
          ...(err.code ? { code: err.code } : {}),
        })
      : new Error(scrub(err.message), cleanCause ? { cause: cleanCause } : undefined);
  if (statusCode !== undefined) Object.assign(clean, { statusCode });
  return clean;
}
