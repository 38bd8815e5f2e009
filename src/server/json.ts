import { jsonErrorLocation } from '../workspace/incident.js';

// JSON bodies: strict UTF-8, bounded nesting (checked before parsing, so a deeply nested body costs
// one linear scan), errors that name the line and column.

export type JsonBody = { ok: true; value: unknown } | { ok: false; code: string; message: string };

/** The deepest nesting of arrays/objects in `text`, stopping early once it passes `limit`. */
export function nestingDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** Decodes and parses a request body; `__proto__` keys are refused (prototype poisoning). */
export function parseJsonBody(data: Buffer, maxDepth: number): JsonBody {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return {
      ok: false,
      code: 'invalid_encoding',
      message: 'request body is not valid UTF-8: send JSON encoded as UTF-8',
    };
  }
  if (text.trim() === '')
    return { ok: false, code: 'empty_body', message: 'request body is empty: send a JSON document' };
  if (nestingDepth(text, maxDepth) > maxDepth)
    return {
      ok: false,
      code: 'json_too_deep',
      message: `request body nests JSON deeper than ${maxDepth} levels (http.json_depth): flatten it`,
    };
  let value: unknown;
  try {
    // JSON.parse makes "__proto__" an own property; refused anyway so that no later merge is poisoned.
    value = text.includes('"__proto__"')
      ? JSON.parse(text, (key, v: unknown) => {
          if (key === '__proto__') throw new ProtoKeyError();
          return v;
        })
      : JSON.parse(text);
  } catch (err) {
    if (err instanceof ProtoKeyError)
      return {
        ok: false,
        code: 'invalid_json',
        message: 'request body has a "__proto__" key, which is refused',
      };
    return {
      ok: false,
      code: 'invalid_json',
      message: `request body is not valid JSON (${jsonErrorLocation(text, err)})`,
    };
  }
  return { ok: true, value };
}

class ProtoKeyError extends Error {}
