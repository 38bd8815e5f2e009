// Scrubs secret values from any text before it is logged or written: by value (the configured secrets
// the daemon actually holds) and by shape (common API-key and token formats it does not know about).

// Shapes start at a word boundary so that names such as `my-task-runner-…` or `disk-pressure-…` survive.
const TOKEN_SHAPES: RegExp[] = [
  /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{10,}/g, // Anthropic
  /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}/g, // OpenAI
  /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{30,}/g, // Google API key
  /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{30,}/g,
  /(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
  /\bA(?:KIA|SIA)[0-9A-Z]{16}\b/g, // AWS access key id
  /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // JWT (service-account tokens)
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{12,}/gi;
const KEY_VALUE =
  /\b([A-Za-z0-9_]*(?:API_KEY|APIKEY|SECRET|TOKEN|PASSWORD|PASSWD)[A-Za-z0-9_]*)(["']?\s*[=:]\s*["']?)([^\s"',;{}[\]]{6,})/gi;
/** Keys that name, count or point at a secret rather than hold one (`secretName`, `input_tokens`, `tokenFile`). */
const NOT_A_SECRET_KEY =
  /(?:tokens|name|names|ref|refs|kind|count|type|file|path|dir|env|url|id|ttl|limit|budget)$/i;
/** Values that are plainly not credentials: numbers, booleans, `$VAR`/`${VAR}` references, already redacted. */
const NOT_A_SECRET_VALUE = /^(?:\d+(?:\.\d+)?|true|false|null|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\[REDACTED.*)$/;

const MIN_SECRET_LENGTH = 6;

/** True when a value has the shape of a credential. */
export function looksSecret(value: string): boolean {
  return (
    TOKEN_SHAPES.some((re) => new RegExp(re.source).test(value)) || new RegExp(BEARER.source, 'i').test(value)
  );
}

export class Redactor {
  private readonly values = new Map<string, string>();
  private sorted: [string, string][] | undefined;

  constructor(secrets: Record<string, string | undefined> = {}) {
    for (const [name, value] of Object.entries(secrets)) if (value) this.add(name, value);
  }

  /**
   * Registers a secret value (and its JSON-escaped form, as it appears inside JSON output); shorter
   * values are ignored because they would mangle ordinary text.
   */
  add(name: string, value: string): void {
    const trimmed = value.trim();
    if (trimmed.length < MIN_SECRET_LENGTH) return;
    // A value registered twice keeps its first (most specific) name, e.g. ANTHROPIC_API_KEY over "agent secret".
    if (!this.values.has(trimmed)) this.values.set(trimmed, name);
    const escaped = JSON.stringify(trimmed).slice(1, -1);
    if (escaped !== trimmed && !this.values.has(escaped)) this.values.set(escaped, name);
    this.sorted = undefined;
  }

  get size(): number {
    return new Set(this.values.values()).size;
  }

  redact(text: string): string {
    let out = text;
    // Longest first so that a secret containing another is replaced whole.
    this.sorted ??= [...this.values.entries()].sort((a, b) => b[0].length - a[0].length);
    for (const [value, name] of this.sorted) {
      if (out.includes(value)) out = out.split(value).join(`[REDACTED:${name}]`);
    }
    for (const re of TOKEN_SHAPES) out = out.replace(re, '[REDACTED]');
    out = out.replace(BEARER, (_m, scheme: string) => `${scheme} [REDACTED]`);
    out = out.replace(KEY_VALUE, (match, key: string, sep: string, value: string) =>
      NOT_A_SECRET_KEY.test(key) || NOT_A_SECRET_VALUE.test(value) ? match : `${key}${sep}[REDACTED]`,
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
