import { redactObjects } from './redact-objects.js';
import { keyLike, redactPairs } from './redact-pairs.js';

// Scrubs secret values from any text before it is logged or written: by value (the configured secrets
// the daemon actually holds) and by shape (common API-key and token formats it does not know about).

// Shapes start at a word boundary so that names such as `my-task-runner-…` or `disk-pressure-…` survive.
// Each comes with the literal text every match of it contains: a text without it is not scanned; and,
// when part of the match stays (a webhook's host), the replacement.
const TOKEN_SHAPES: [RegExp, string[], string?][] = [
  [/(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{30,}/g, ['AIza']], // Google API key
  [/(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}/g, ['gh']], // GitHub tokens
  [/(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{30,}/g, ['github_pat_']],
  [/(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/g, ['glpat-']], // GitLab
  [/(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}\b/g, ['npm_']], // npm
  [/(?<![A-Za-z0-9_-])(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}/g, ['xox', 'xapp-']], // Slack
  [
    /(https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+/g,
    ['hooks.slack.com'],
    '$1[REDACTED]',
  ],
  [/(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}/g, ['_live_', '_test_']], // Stripe secret, restricted
  [/(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/=]{20,}/g, ['whsec_']], // Stripe webhook signing secret
  [/\bA(?:KIA|SIA)[0-9A-Z]{16}\b/g, ['AKIA', 'ASIA']], // AWS access key id
  [/\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, ['eyJ']], // JWT (service-account tokens)
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, ['-----BEGIN ']],
  // A key cut before its END line (an output cut at its bound): its base64 lines go.
  [
    /-----BEGIN [A-Z ]*PRIVATE KEY-----(?:(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: [^\n\\]*))*/g,
    ['-----BEGIN '],
  ],
];
/** An AWS secret access key: 40 characters of base64, only recognisable next to its key id or name. */
const AWS_SECRET = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
const AWS_ANCHOR = /\bA(?:KIA|SIA)[0-9A-Z]{16}\b|secret[ _-](?:access[ _-])?key/gi;
/** Characters either side of a key id or "secret access key" where a 40-character value is its secret. */
const AWS_WINDOW = 320;
/**
 * Anthropic (`sk-ant-…`) and OpenAI-style (`sk-…`, `sk-proj-…`) keys. `sk-` also starts ordinary
 * Kubernetes names (`sk-payments-api-7c9d8f6b5d-x2k9q`), so a match only counts when it is key-like
 * (see keyLike).
 */
const SK_KEY = /(?<![A-Za-z0-9_-])sk-(?:ant-)?[A-Za-z0-9_-]{10,}/g;
/**
 * `Authorization: Bearer …` (any case): whatever follows the scheme is a credential, including what is
 * left around a configured value already replaced (a Basic header's base64 of `user:<secret>`).
 */
const AUTH_HEADER =
  /\b(authorization["']?[ \t]*[:=][ \t]*["']?)(Bearer|Basic|Token)([ \t]+)((?:[A-Za-z0-9._~+/=-]|\[REDACTED[^\]\s]*\])+)/gi;
/** `Bearer …`/`Basic …` elsewhere; after `basic` the word must look random (prose says "basic authentication"). */
const BEARER = /\b(Bearer|Basic)([ \t]+)([A-Za-z0-9._~+/=-]{12,})/gi;
/** Configured values shorter than this are not credentials: replacing them would mangle ordinary text. */
export const MIN_SECRET_LENGTH = 8;
/** Letters-only values shorter than this are words (`offline`, `password`), not credentials. */
const MIN_WORD_SECRET_LENGTH = 16;

/** Random-looking (a digit, or upper case after the first letter): not an English word. */
const randomLooking = (text: string) => /[0-9]/.test(text) || /[A-Z]/.test(text.slice(1));

/**
 * Why a configured secret value is too weak to be redacted by value (replacing it would rewrite
 * ordinary words in every log line and show which word the secret is), or undefined when it is safe.
 * The reason never contains the value.
 */
export function weakSecretReason(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.length < MIN_SECRET_LENGTH)
    return `it is ${trimmed.length} characters long, shorter than any real credential (${MIN_SECRET_LENGTH} at least)`;
  if (trimmed.length < MIN_WORD_SECRET_LENGTH && /^[A-Za-z]+$/.test(trimmed))
    return `it is a plain ${trimmed.length}-letter word, not a credential`;
  return undefined;
}

/**
 * AWS secret access keys near their key id or their name ("secret access key", `aws_secret_access_key`):
 * a 40-character base64 word mixing cases and digits (a git SHA is lower-case hex and stays).
 */
function redactAwsSecrets(text: string): string {
  if (!/AKIA|ASIA|secret[ _-](?:access[ _-])?key/i.test(text)) return text;
  // The windows around each anchor, merged; only they are scanned.
  const windows: [number, number][] = [];
  for (const m of text.matchAll(AWS_ANCHOR)) {
    const from = Math.max(0, m.index - AWS_WINDOW);
    const to = Math.min(text.length, m.index + m[0].length + AWS_WINDOW);
    const last = windows.at(-1);
    if (last && from <= last[1]) last[1] = to;
    else windows.push([from, to]);
  }
  let out = '';
  let at = 0;
  for (const [from, to] of windows) {
    const part = text.slice(from, to).replace(AWS_SECRET, (match) => {
      const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[/+]/].filter((re) => re.test(match)).length;
      return classes >= 3 ? '[REDACTED]' : match;
    });
    out += text.slice(at, from) + part;
    at = to;
  }
  return out + text.slice(at);
}

/** Replaces token shapes (not configured values) with [REDACTED]. */
function redactShapes(text: string): string {
  let out = redactAwsSecrets(text);
  for (const [re, literals, replacement] of TOKEN_SHAPES)
    if (literals.some((literal) => out.includes(literal))) out = out.replace(re, replacement ?? '[REDACTED]');
  if (out.includes('sk-'))
    out = out.replace(SK_KEY, (match) =>
      keyLike(match.replace(/^sk-(?:ant-)?/, '')) ? '[REDACTED]' : match,
    );
  out = out.replace(AUTH_HEADER, (match, head: string, scheme: string, gap: string, token: string) =>
    token.length < 8 ? match : `${head}${scheme}${gap}[REDACTED]`,
  );
  out = out.replace(BEARER, (match, scheme: string, gap: string, token: string) =>
    token.startsWith('[REDACTED') ||
    (scheme.toLowerCase() === 'basic' && !randomLooking(token) && !/[+/=]/.test(token))
      ? match
      : `${scheme}${gap}[REDACTED]`,
  );
  return out;
}

/**
 * What a text is redacted for beyond configured values: Kubernetes objects (Secret data, multi-line
 * credentials, JSON strings holding them, decoded and passed through this again), token shapes, and
 * credential-named pairs.
 */
function redactSeen(text: string, depth: number): string {
  return redactPairs(redactShapes(redactObjects(text, redactSeen, depth)));
}

/** True when a value has the shape of a credential. */
export function looksSecret(value: string): boolean {
  return redactShapes(value) !== value;
}

/**
 * The base64 spellings of `value` as it appears inside any base64 text (a Kubernetes Secret's data, a
 * Basic auth header, a docker config): one for each of the three byte alignments, keeping only the
 * characters that depend on the value alone.
 */
export function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value);
  const out: string[] = [];
  for (const shift of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const total = shift + bytes.length;
    const rest = total % 3;
    const end = Math.floor(total / 3) * 4 + (rest === 0 ? 0 : rest);
    const begin = shift === 0 ? 0 : shift === 1 ? 2 : 3;
    const form = encoded.slice(begin, end);
    if (form.length >= 8) out.push(form);
  }
  return out;
}

const MEMO_MIN_CHARS = 4096;
const MEMO_ENTRIES = 16;

/** What to tell the user about a secret too weak to redact (`reason` from weakSecretReason). */
export const weakSecretMessage = (name: string, reason: string): string =>
  `the value of ${name} is not redacted by value: ${reason}, and replacing it would rewrite ordinary text in every log line; ` +
  'set the real credential (a local stand-in model server accepts any value, e.g. local-stand-in-key-0001)';

export class Redactor {
  private readonly values = new Map<string, string>();
  private sorted: [string, string][] | undefined;
  /** Names whose values were too weak to redact by value, with the reason (never the value). */
  private readonly weak = new Map<string, string>();
  /** Recent large texts and their redaction (cleared when a secret is added). */
  private readonly memo = new Map<string, string>();

  constructor(secrets: Record<string, string | undefined> = {}) {
    for (const [name, value] of Object.entries(secrets)) if (value) this.add(name, value);
  }

  /**
   * Registers a secret value (and its JSON-escaped and base64 forms, as they appear inside JSON output
   * or a Kubernetes Secret); values too weak to be credentials are left out (see `unredacted`)
   * because replacing them would rewrite ordinary text.
   */
  add(name: string, value: string): void {
    const trimmed = value.trim();
    const weak = weakSecretReason(trimmed);
    if (weak !== undefined) {
      if (trimmed.length > 0) this.weak.set(name, weak);
      return;
    }
    // A value registered twice keeps its first (most specific) name, e.g. ANTHROPIC_API_KEY over "agent secret".
    if (!this.values.has(trimmed)) this.values.set(trimmed, name);
    const escaped = JSON.stringify(trimmed).slice(1, -1);
    if (escaped !== trimmed && !this.values.has(escaped)) this.values.set(escaped, name);
    for (const form of base64Forms(trimmed)) if (!this.values.has(form)) this.values.set(form, name);
    this.sorted = undefined;
    this.memo.clear();
  }

  /** Secrets left out because their values are too weak to redact: name and why, never the value. */
  get unredacted(): { name: string; reason: string }[] {
    return [...this.weak].map(([name, reason]) => ({ name, reason }));
  }

  get size(): number {
    return new Set(this.values.values()).size;
  }

  redact(text: string): string {
    // The same large texts (prompt parts) are redacted several times per run: remember the last few.
    if (text.length >= MEMO_MIN_CHARS) {
      const known = this.memo.get(text);
      if (known !== undefined) return known;
      const out = this.redactUncached(text);
      if (this.memo.size >= MEMO_ENTRIES) this.memo.delete(this.memo.keys().next().value as string);
      this.memo.set(text, out);
      // Redacting the result again gives the result: remember that too.
      if (out !== text) this.memo.set(out, out);
      return out;
    }
    return this.redactUncached(text);
  }

  private redactUncached(text: string): string {
    let out = text;
    // Longest first so that a secret containing another is replaced whole.
    this.sorted ??= [...this.values.entries()].sort((a, b) => b[0].length - a[0].length);
    for (const [value, name] of this.sorted) {
      if (out.includes(value)) out = out.split(value).join(`[REDACTED:${name}]`);
    }
    return redactSeen(out, 0);
  }

  /** Deep-redacts strings inside a JSON-like value. */
  redactValue<T>(value: T): T {
    if (typeof value === 'string') return this.redact(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.redactValue(v)) as T;
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.redactValue(v);
      return out as T;
    }
    return value;
  }
}
