import { describe, expect, it } from 'vitest';
import { parseFrontmatter } from '../../../src/context/disclosure/frontmatter.js';

// Frontmatter of SKILL.md and PERSONA.md: split from the body, parsed as YAML, errors with file lines.
// The same text is parsed once and shared, so what it returns must not be changeable by a caller.

const skill = (description: string) =>
  `---\nname: k8s-troubleshooter\ndescription: ${description}\ntags: [pods, nodes]\n---\n# Body\n`;

describe('parseFrontmatter', () => {
  it('returns the mapping and the body', () => {
    expect(parseFrontmatter(skill('Diagnose pods'))).toEqual({
      ok: true,
      data: { name: 'k8s-troubleshooter', description: 'Diagnose pods', tags: ['pods', 'nodes'] },
      body: '# Body\n',
    });
  });

  it('gives the same text the same answer, frozen so that one caller cannot change it for the next', () => {
    const first = parseFrontmatter(skill('Shared text'));
    const second = parseFrontmatter(skill('Shared text'));
    expect(second).toEqual(first);
    if (!first.ok) throw new Error('expected frontmatter');
    expect(() => {
      (first.data as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    expect(() => (first.data.tags as string[]).push('more')).toThrow(TypeError);
    expect(parseFrontmatter(skill('Shared text'))).toMatchObject({ data: { name: 'k8s-troubleshooter' } });
  });

  it('sees an edit at once: other text, other answer', () => {
    parseFrontmatter(skill('Before the edit'));
    expect(parseFrontmatter(skill('After the edit'))).toMatchObject({
      data: { description: 'After the edit' },
    });
  });

  it('reports a YAML error at its line in the whole file, every time it is asked', () => {
    const text = '---\nname: x\ndescription: a: b\n---\nbody';
    for (let i = 0; i < 2; i++)
      expect(parseFrontmatter(text)).toMatchObject({ ok: false, reason: 'yaml', line: 3, column: 14 });
  });

  it('rejects an alias bomb without caching anything that could hide it', () => {
    const bomb = [
      '---',
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      '---',
      '',
    ].join('\n');
    expect(parseFrontmatter(bomb)).toMatchObject({ ok: false, reason: 'rejected' });
    expect(parseFrontmatter(bomb)).toMatchObject({ ok: false, reason: 'rejected' });
  });
});
