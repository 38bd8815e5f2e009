// Secret-named pairs and URL passwords: `DB_PASSWORD=…`, `"client_secret": "…"`, Kubernetes env
// entries (`{"name":"AWS_SECRET_ACCESS_KEY","value":"…"}`, `- name: X` / `value: …`) and
// `scheme://user:password@host`. Which names count is secretName; which values, secretValue. The
// patterns are linear: each starts at a literal and never rescans a run from every position.

// `NAME=value`, `NAME: value`, `"NAME": "value"` where NAME is a secret's name (see secretName). The
// separator stays on one line: a YAML key ending a line (`secret:` above `secretName: x`) is not a
// pair. A quoted value runs to its closing quote (spaces included); a bare one to a space, a delimiter
// or an escape (`\n`, `\"`: the end of a line or of a string inside a JSON string).
const KEY_VALUE =
  /\b([A-Za-z0-9_]*(?:API_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|_KEY|_PASS)[A-Za-z0-9_]*)(["']?[ \t]*[=:][ \t]*)(?:(["'])((?:\\.|(?!\3)[^\\\r\n])*)\3|(\$\{[A-Za-z_][A-Za-z0-9_]*\}|(?:[^\s"',;{}[\]\\]|\\(?![nrt"]))+))/gi;
/**
 * Kubernetes (and ECS) environment entries: a `name`/`key` field holding a secret's name next to a
 * `value` field, in JSON (also JSON inside a JSON string: `\"`), in either order, and in YAML
 * (`- name: DB_PASSWORD` then `value: …` on the next line, or a flow mapping).
 */
const Q = String.raw`\\*["']`;
// Lazy, so that the value of an entry inside a JSON string ends at its `\"`.
const JSON_STRING = String.raw`((?:\\.|[^"'\\\r\n])*?)`;
// Each pattern starts at a quote (not at the backslashes before it): a long run of backslashes must
// not be rescanned from every position.
const ENV_NAME_VALUE = new RegExp(
  String.raw`(["'](?:name|key)${Q}\s*:\s*${Q})([A-Za-z0-9_.-]+)(${Q}\s*,\s*${Q}value${Q}\s*:\s*${Q})${JSON_STRING}(${Q})`,
  'g',
);
const ENV_VALUE_NAME = new RegExp(
  String.raw`(["']value${Q}\s*:\s*${Q})${JSON_STRING}(${Q}\s*,\s*${Q}(?:name|key)${Q}\s*:\s*${Q})([A-Za-z0-9_.-]+)(?=${Q})`,
  'g',
);
const ENV_YAML =
  /(\bname:[ \t]*(["']?))([A-Za-z0-9_.-]+)(\2(?:[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*(?:-[ \t]+)?)value:[ \t]*)([^\r\n]*)/g;
/** `scheme://user:password@host`: the password goes (any URL, any scheme); a token-like bare user too. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)([^\s/?#'"<>]+)@/gi;

/** Keys that name, count or point at a secret rather than hold one (`secretName`, `input_tokens`, `tokenFile`). */
const NOT_A_SECRET_KEY =
  /(?:tokens|name|names|ref|refs|kind|count|type|file|path|dir|env|url|id|ttl|limit|budget)$/i;
/** `*_KEY` names that are not credentials: database and partition keys, public keys. */
const NOT_A_SECRET_KEY_NAME =
  /^(?:[A-Z0-9_]*_)?(?:PRIMARY|FOREIGN|PUBLIC|SORT|PARTITION|HASH|RANGE|CACHE|IDEMPOTENCY|DEDUP|LOOKUP|INDEX|GROUP|MAP)_KEY$/;
/**
 * Secret families: `*_PASSWORD`, `*_TOKEN`, `*_SECRET`, `*_CREDENTIALS`, API, access and private keys
 * (any case); `*_PASS` (`DB_PASS`); `*_KEY` in upper-case (env style).
 */
const SECRET_FAMILY = /API_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|PRIVATE_?KEY|ACCESS_?KEY/i;
const PASS_NAME = /(?:^|_)PASS$/i;
const UPPER_KEY = /^[A-Z0-9_]*_KEY(?:_[A-Z0-9_]+)?$/;

/** True when `name` (an env var or field name) names a credential. */
export function secretName(name: string): boolean {
  if (NOT_A_SECRET_KEY.test(name)) return false;
  if (SECRET_FAMILY.test(name) || PASS_NAME.test(name)) return true;
  return UPPER_KEY.test(name) && !NOT_A_SECRET_KEY_NAME.test(name);
}

/** File-like keys that hold credentials in a Secret or ConfigMap (`tls.key`, `credentials.json`, `.htpasswd`). */
const CREDENTIAL_FILE =
  /(?:^|[._-])(?:credentials?|key|pem|p12|pfx|jks|keystore|id_rsa|id_ecdsa|id_ed25519|htpasswd|netrc|pgpass|dockerconfigjson|dockercfg)(?:$|[._-])/i;

/** True when a data key or YAML key (`DB_PASSWORD`, `tls.key`, `credentials.json`) names a credential. */
export function credentialName(name: string): boolean {
  return secretName(name) || (CREDENTIAL_FILE.test(name) && !/public|(?:^|[._-])pub(?:$|[._-])/i.test(name));
}

/**
 * Values that are plainly not credentials: numbers, booleans, `$VAR`/`${VAR}` references, placeholders
 * such as kubectl's `<set to the key 'x' in secret 'y'>`, a Secret's key sizes as `kubectl describe`
 * shows them (`16 bytes`), masks (`****`), already redacted.
 */
const NOT_A_SECRET_VALUE =
  /^(?:\d+(?:\.\d+)?(?: bytes)?|true|false|null|none|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<.*|\*+|\[REDACTED.*)$/i;

/**
 * A lower-case word or Kubernetes-style name (`unexpected`, `payments-db-credentials`): after `token:` or
 * `secret:` in prose and events it is a word or the name of a Secret, not a credential (passwords excepted).
 */
const WORD_OR_NAME = /^[a-z]+(?:[-.][a-z0-9]+)*$/;
const PASSWORD_KEY = /PASSWORD|PASSWD|PASSPHRASE/i;

/** Values under other secret names shorter than this are words (`token: none`, `secret: db`), not credentials. */
const MIN_VALUE_LENGTH = 6;

/** True when `value`, held by the secret-named `key`, should be scrubbed. */
function secretValue(key: string, value: string): boolean {
  const v = value.trim();
  if (v === '' || NOT_A_SECRET_VALUE.test(v)) return false;
  if (PASSWORD_KEY.test(key)) return true;
  if (v.length < MIN_VALUE_LENGTH) return false;
  return !(WORD_OR_NAME.test(v) && !/[a-z0-9]{16,}/.test(v));
}

/**
 * A generated key has a digit and is mixed-case, has an underscore, or has a long unbroken run of
 * letters and digits; a Kubernetes name is lower-case words and short hashes joined by hyphens.
 */
export function keyLike(body: string): boolean {
  if (body.length < 20 || !/[0-9]/.test(body)) return false;
  return /[A-Z]/.test(body) || body.includes('_') || /[a-z0-9]{16,}/.test(body);
}

/**
 * Words every match of KEY_VALUE contains (its name holds one of them, in any case). Looking for them
 * first is about three times cheaper than running KEY_VALUE over a text that holds none; URL_USERINFO
 * needs `://` and the environment-entry patterns `value`. Text with none of them is returned as it is.
 */
const KEY_VALUE_WORDS = /KEY|SECRET|TOKEN|PASS|CREDENTIAL/i;

/** Passwords in URLs, then secret-named environment entries, `NAME=value` pairs and quoted credentials in prose. */
export function redactPairs(text: string): string {
  let out = text.includes('://') ? redactUrlPasswords(text) : text;
  if (out.includes('value')) out = redactEnvEntries(out);
  return KEY_VALUE_WORDS.test(out) ? redactProse(redactKeyValues(out)) : out;
}

/**
 * A credential quoted in prose, as a report quotes what it found: "the database password is
 * `Hunter2-prod`", "the password in `payments-db` is `…`", "AWS secret key: 'wJalr…'", "token
 * `q9w8e7r6t5y4`". The value must be quoted (backticks or quotes) on the same line. A word or a
 * Kubernetes name stays unless a verb or `:` says it is the credential ("the password is `changeme`"):
 * "the token `default-token-x7k2p`" and "the password in Secret `payments-db`" name Secrets.
 */
const PROSE =
  /\b(passwords?|passwd|passphrase|(?:(?:aws[ _-])?secret|access|private|api)[ _-]?(?:access[ _-]?)?keys?|tokens?|credentials?)((?:[ \t]+(?:in|of|for|from)[ \t]+[`"']?[A-Za-z0-9._/-]+[`"']?)?)((?:[ \t]+(?:is|was|were|are|now|still|currently|reads|shows|set to|changed to|value|=|:))*[ \t]*[:=]?[ \t]*)([`"'])([^`"'\s]{6,256})\4/gi;
const SAYS_IT_IS = /\b(?:is|was|were|are|reads|shows|set to|changed to)\b|[:=]/;

function redactProse(text: string): string {
  return text.replace(
    PROSE,
    (match, word: string, where: string, gap: string, quote: string, value: string) => {
      if (NOT_A_SECRET_VALUE.test(value)) return match;
      const says = SAYS_IT_IS.test(gap);
      if (where && !says) return match;
      if (WORD_OR_NAME.test(value) && !(says && PASSWORD_KEY.test(word))) return match;
      return `${word}${where}${gap}${quote}[REDACTED]${quote}`;
    },
  );
}

function redactUrlPasswords(text: string): string {
  return text.replace(URL_USERINFO, (match, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    if (colon < 0) return keyLike(userinfo) ? `${scheme}[REDACTED]@` : match;
    const password = userinfo.slice(colon + 1);
    if (password === '' || NOT_A_SECRET_VALUE.test(password)) return match;
    return `${scheme}${userinfo.slice(0, colon)}:[REDACTED]@`;
  });
}

function redactEnvEntries(text: string): string {
  let out = text.replace(
    ENV_NAME_VALUE,
    (match, head: string, name: string, mid: string, value: string, close: string) =>
      secretName(name) && secretValue(name, value) ? `${head}${name}${mid}[REDACTED]${close}` : match,
  );
  out = out.replace(ENV_VALUE_NAME, (match, head: string, value: string, mid: string, name: string) =>
    secretName(name) && secretValue(name, value) ? `${head}[REDACTED]${mid}${name}` : match,
  );
  out = out.replace(ENV_YAML, (match, head: string, _q: string, name: string, mid: string, rest: string) => {
    if (!secretName(name)) return match;
    const { value, quote, tail } = yamlScalar(rest, mid.includes(','));
    return secretValue(name, value) ? `${head}${name}${mid}${quote}[REDACTED]${quote}${tail}` : match;
  });
  return out;
}

/**
 * The scalar at the start of `rest` (the rest of a YAML line after `value:`): quoted ('' and \"
 * escapes), or plain, which in a flow mapping (`{name: X, value: y}`) ends at `,` or `}` and in a block
 * mapping runs to the end of the line (a comma is part of it). An unclosed quote runs to the end too.
 */
function yamlScalar(rest: string, flow: boolean): { value: string; quote: string; tail: string } {
  const quote = rest[0] === '"' || rest[0] === "'" ? rest[0] : '';
  if (quote) {
    const close = quote === '"' ? /^"(?:[^"\\]|\\.)*"/.exec(rest) : /^'(?:[^']|'')*'/.exec(rest);
    if (!close) return { value: rest.slice(1), quote, tail: '' };
    return { value: close[0].slice(1, -1), quote, tail: rest.slice(close[0].length) };
  }
  const end = flow ? rest.search(/[,}]/) : -1;
  const plain = end < 0 ? rest : rest.slice(0, end);
  const value = plain.replace(/[ \t]+(?:#.*)?$/, '');
  return { value, quote: '', tail: rest.slice(value.length) };
}

/**
 * `NAME=value` pairs. A plain value after `KEY:` opening a line (YAML, `kubectl describe`'s environment)
 * runs to the end of the line, commas and spaces included (`DB_PASSWORD:  p@ss,w0rd: x`); spaces only
 * for passwords (`API_TOKEN: not set` is prose).
 */
function redactKeyValues(text: string): string {
  let out = '';
  let at = 0;
  KEY_VALUE.lastIndex = 0;
  for (let m = KEY_VALUE.exec(text); m; m = KEY_VALUE.exec(text)) {
    const [match, key = '', sep = '', quote, quoted, bare = ''] = m;
    let value = quote ? (quoted ?? '') : bare;
    let end = m.index + match.length;
    if (!quote && sep.includes(':') && opensLine(text, m.index)) {
      const from = m.index + key.length + sep.length;
      const eol = text.indexOf('\n', end);
      const whole = text.slice(from, eol < 0 ? text.length : eol).trimEnd();
      if (whole.length > value.length && (PASSWORD_KEY.test(key) || !/\s/.test(whole))) {
        value = whole;
        end = from + whole.length;
      }
    }
    if (!secretName(key) || !secretValue(key, value)) continue;
    out += `${text.slice(at, m.index)}${key}${sep}${quote ?? ''}[REDACTED]${quote ?? ''}`;
    at = end;
    KEY_VALUE.lastIndex = Math.max(KEY_VALUE.lastIndex, end);
  }
  return at === 0 ? text : out + text.slice(at);
}

/** Only spaces, tabs and a YAML list dash between the line's start and `index`. */
function opensLine(text: string, index: number): boolean {
  for (let i = index - 1; i >= 0; i--) {
    const c = text[i];
    if (c === '\n') return true;
    if (c !== ' ' && c !== '\t' && c !== '-') return false;
  }
  return true;
}
