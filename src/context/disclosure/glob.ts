// Glob patterns for boot.yml: `**` (any number of path segments), `*` and `?` (within one segment),
// `[abc]` / `[!abc]` classes, `\x` escapes. Paths and patterns use `/`. Our own converter rather than
// node's `path.matchesGlob`, which is experimental in Node 20 and prints a warning.

/** Compiles a glob into an anchored regular expression over `/`-separated relative paths. */
export function globToRegExp(pattern: string): RegExp {
  const segments = normalizePattern(pattern).split('/');
  // Consecutive `**` segments mean the same as one.
  const segs = segments.filter((s, i) => !(s === '**' && segments[i - 1] === '**'));
  let re = '';
  let afterGlobstar = false;
  segs.forEach((seg, i) => {
    const first = i === 0;
    const last = i === segs.length - 1;
    if (seg === '**') {
      if (last) re += first ? '.*' : '(?:/.*)?';
      else re += first ? '(?:[^/]+/)*' : '/(?:[^/]+/)*';
      afterGlobstar = true;
      return;
    }
    if (!first && !afterGlobstar) re += '/';
    afterGlobstar = false;
    re += segmentToRegExp(seg);
  });
  return new RegExp(`^${re}$`);
}

/** A compiled set of globs; an empty set matches nothing. */
export class GlobSet {
  private readonly regexps: RegExp[];
  constructor(readonly patterns: readonly string[]) {
    this.regexps = patterns.map(globToRegExp);
  }
  matches(...candidates: string[]): boolean {
    return this.regexps.some((re) => candidates.some((c) => re.test(c)));
  }
}

function normalizePattern(pattern: string): string {
  let p = pattern.trim().replace(/\\(?![*?[\]\\])/g, '/');
  while (p.startsWith('./')) p = p.slice(2);
  p = p
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\/{2,}/g, '/');
  return p;
}

function segmentToRegExp(seg: string): string {
  let out = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i] as string;
    if (c === '\\' && i + 1 < seg.length) {
      out += escapeRegExp(seg[++i] as string);
    } else if (c === '*') {
      while (seg[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const close = seg.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
        continue;
      }
      let body = seg.slice(i + 1, close);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^/' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = close;
    } else {
      out += escapeRegExp(c);
    }
  }
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
