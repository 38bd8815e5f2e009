// Scrubs secret values from any text before it is logged or written: by value (the configured secrets
// the daemon actually holds) and by shape (common API-key and token formats it does not know about).

const TOKEN_SHAPES: RegExp[] = [
  /sk-ant-[A-Za-z0-9_-]{10,}/g, // Anthropic
  /sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g, // OpenAI
  /AIza[0-9A-Za-z_-]{30,}/g, // Google API key
  /gh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /github_pat_[A-Za-z0-9_]{30,}/g,
  /xox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
  /\bA(?:KIA|SIA)[0-9A-Z]{16}\b/g, // AWS access key id
  /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // JWT (service-account tokens)
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{12,}/gi;
const KEY_VALUE = /\b([A-Za-z0-9_]*(?:API_KEY|APIKEY|SECRET|TOKEN|PASSWORD|PASSWD)[A-Za-z0-9_]*)(["']?\s*[=:]\s*["']?)([^\s"',;]{6,})/gi;

const MIN_SECRET_LENGTH = 6;

/** True when a value has the shape of a credential. */
export function looksSecret(value: string): boolean {
  return TOKEN_SHAPES.some((re) => new RegExp(re.source).test(value)) || new RegExp(BEARER.source, 'i').test(value);
}

export class Redactor {
  private readonly values = new Map<string, string>();

  constructor(secrets: Record<string, string | undefined> = {}) {
    for (const [name, value] of Object.entries(secrets)) if (value) this.add(name, value);
  }

  /** Registers a secret value; shorter values are ignored because they would mangle ordinary text. */
  add(name: string, value: string): void {
    const trimmed = value.trim();
    if (trimmed.length >= MIN_SECRET_LENGTH) this.values.set(trimmed, name);
  }

  get size(): number {
    return this.values.size;
  }

  redact(text: string): string {
    let out = text;
    // Longest first so that a secret containing another is replaced whole.
    const known = [...this.values.entries()].sort((a, b) => b[0].length - a[0].length);
    for (const [value, name] of known) {
      if (out.includes(value)) out = out.split(value).join(`[REDACTED:${name}]`);
    }
    for (const re of TOKEN_SHAPES) out = out.replace(re, '[REDACTED]');
    out = out.replace(BEARER, (_m, scheme: string) => `${scheme} [REDACTED]`);
    out = out.replace(KEY_VALUE, (match, key: string, sep: string, value: string) =>
      value.startsWith('[REDACTED') || /^\$\{?[A-Z_]+\}?$/.test(value) ? match : `${key}${sep}[REDACTED]`,
    );
    return out;
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
