// A few top-level members of a JSON object, read from its bytes without parsing the rest: a model
// request is megabytes of conversation around the two or three fields the gateway needs (`model`,
// `max_tokens`), and parsing all of it would hold the request twice more in memory (as a string and as
// objects) while the call is under way. Each wanted member's value is parsed alone with JSON.parse;
// everything else is skipped by its structure (strings jumped over with indexOf, so the bulk of a
// conversation is never looked at byte by byte). A body that is not a JSON object gives undefined.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function skipSpace(body: Buffer, i: number): number {
  while (isSpace(body[i])) i++;
  return i;
}

/** The index just past the string that starts at `i` (a quote), or -1 when it never ends. */
function skipString(body: Buffer, i: number): number {
  let j = i + 1;
  for (;;) {
    const end = body.indexOf(QUOTE, j);
    if (end === -1) return -1;
    let slashes = 0;
    while (body[end - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end + 1;
    j = end + 1;
  }
}

/** The index just past the value that starts at `i`, or -1 when it is cut short. */
function skipValue(body: Buffer, i: number): number {
  const first = body[i];
  if (first === QUOTE) return skipString(body, i);
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    // A number, true, false or null: up to the next delimiter or space.
    let j = i;
    while (
      j < body.length &&
      !isSpace(body[j]) &&
      body[j] !== COMMA &&
      body[j] !== CLOSE_OBJECT &&
      body[j] !== CLOSE_ARRAY
    )
      j++;
    return j;
  }
  let depth = 0;
  for (let j = i; j < body.length;) {
    const b = body[j];
    if (b === QUOTE) {
      j = skipString(body, j);
      if (j === -1) return -1;
      continue;
    }
    if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
    else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
  return -1;
}

function parse(body: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(body.toString('utf8', start, end)) as unknown;
  } catch {
    return undefined;
  }
}

/** The members of the top-level object named in `wanted` (the last of a repeated name, as JSON.parse). */
export function topLevelFields(
  body: Buffer,
  wanted: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  let i = skipSpace(body, 0);
  if (body[i] !== OPEN_OBJECT) return undefined;
  const out: Record<string, unknown> = {};
  i = skipSpace(body, i + 1);
  if (body[i] === CLOSE_OBJECT) return out;
  for (;;) {
    if (body[i] !== QUOTE) return undefined;
    const keyEnd = skipString(body, i);
    if (keyEnd === -1) return undefined;
    const key = parse(body, i, keyEnd);
    i = skipSpace(body, keyEnd);
    if (body[i] !== COLON) return undefined;
    const start = skipSpace(body, i + 1);
    const end = skipValue(body, start);
    if (end === -1 || end === start) return undefined;
    if (typeof key === 'string' && wanted.has(key)) out[key] = parse(body, start, end);
    i = skipSpace(body, end);
    if (body[i] === CLOSE_OBJECT) return out;
    if (body[i] !== COMMA) return undefined;
    i = skipSpace(body, i + 1);
  }
}
