import { Minimatch, type MinimatchOptions } from 'minimatch';

// Glob patterns for boot.yml, matched by minimatch over `/`-separated relative paths: `**` (any number
// of folders), `*` and `?` (within one folder), `[abc]` / `[!abc]` classes, `{a,b}` alternatives, `\x`
// escapes. Dot files match like any other file; a leading `!` or `#` is an ordinary character (no
// negation, no comments) and extglobs are off, so `(`, `|` and `)` in a brief's name are literal.

const OPTIONS: MinimatchOptions = { dot: true, nonegate: true, nocomment: true, noext: true };

/** A compiled set of globs; an empty set matches nothing. */
export class GlobSet {
  private readonly matchers: Minimatch[];
  constructor(readonly patterns: readonly string[]) {
    this.matchers = patterns.map((p) => new Minimatch(normalizePattern(p), OPTIONS));
  }
  matches(...candidates: string[]): boolean {
    return this.matchers.some((m) => candidates.some((c) => m.match(c)));
  }
}

/** A leading `./` or `/`, a trailing `/` and doubled slashes mean nothing; `\` before a non-glob character is a folder separator. */
function normalizePattern(pattern: string): string {
  let p = pattern.trim().replace(/\\(?![*?[\]{}\\])/g, '/');
  while (p.startsWith('./')) p = p.slice(2);
  return p
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\/{2,}/g, '/');
}
