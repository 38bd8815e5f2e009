import { describe, expect, it } from 'vitest';
import { GlobSet } from '../../../src/context/disclosure/glob.js';

const m = (pattern: string, p: string) => new GlobSet([pattern]).matches(p);

describe('boot.yml globs', () => {
  it('matches ** as zero or more folders', () => {
    expect(m('practices/code.test/**/*.md', 'practices/code.test/unit.md')).toBe(true);
    expect(m('practices/code.test/**/*.md', 'practices/code.test/a/b/c.md')).toBe(true);
    expect(m('practices/code.test/**/*.md', 'practices/code.testx/a.md')).toBe(false);
    expect(m('**/*.md', 'a.md')).toBe(true);
    expect(m('**/*.md', 'a/b/c.md')).toBe(true);
    expect(m('**', 'anything/at/all')).toBe(true);
    expect(m('a/**', 'a/b/c')).toBe(true);
    expect(m('a/**', 'ab/c')).toBe(false);
    expect(m('a/**/**/b', 'a/b')).toBe(true);
  });

  it('keeps * and ? inside one folder', () => {
    expect(m('runbooks/*.md', 'runbooks/oom.md')).toBe(true);
    expect(m('runbooks/*.md', 'runbooks/deep/oom.md')).toBe(false);
    expect(m('runbooks/?om.md', 'runbooks/oom.md')).toBe(true);
    expect(m('runbooks/?om.md', 'runbooks/room.md')).toBe(false);
    expect(m('*', 'a/b')).toBe(false);
  });

  it('treats regex characters literally and supports classes and escapes', () => {
    expect(m('practices/lang.terms/a+b(1).md', 'practices/lang.terms/a+b(1).md')).toBe(true);
    expect(m('practices/lang.terms/*.md', 'practices/langXterms/a.md')).toBe(false);
    expect(m('r/[abc].md', 'r/b.md')).toBe(true);
    expect(m('r/[!abc].md', 'r/b.md')).toBe(false);
    expect(m('r/[a-c].md', 'r/c.md')).toBe(true);
    expect(m('r/\\*.md', 'r/*.md')).toBe(true);
    expect(m('r/\\*.md', 'r/x.md')).toBe(false);
  });

  it.each([
    ['runbooks/{oom,crashloop}.md', 'runbooks/oom.md', true],
    ['runbooks/{oom,crashloop}.md', 'runbooks/image-pull.md', false],
    ['!notes.md', '!notes.md', true],
    ['!notes.md', 'other.md', false],
    ['#x.md', '#x.md', true],
    ['x/(a|b).md', 'x/a.md', false],
    ['x/(a|b).md', 'x/(a|b).md', true],
    ['reference/*.md', 'reference/.hidden.md', true],
  ])(
    'expands {a,b}, keeps a leading ! or #, parentheses and bars literal: %s vs %s → %s',
    (pattern, p, want) => {
      expect(m(pattern, p)).toBe(want);
    },
  );

  it('ignores a leading ./ or / and a trailing /', () => {
    expect(m('./runbooks/oom.md', 'runbooks/oom.md')).toBe(true);
    expect(m('/runbooks/', 'runbooks')).toBe(true);
  });

  it('an empty GlobSet matches nothing; a set matches when any pattern matches any candidate', () => {
    expect(new GlobSet([]).matches('a')).toBe(false);
    expect(new GlobSet(['x', 'src/*/SKILL.md']).matches('src/a', 'src/a/SKILL.md')).toBe(true);
  });
});
