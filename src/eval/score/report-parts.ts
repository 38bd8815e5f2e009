import { normalizeHeading } from '../../audit/report.js';
import { asMarked, parseMarkdown, plainText, type Token } from '../../util/markdown.js';

// The pieces of a report the scorer reads, from the daemon's one markdown parser (src/util/markdown.ts),
// so the scorer, the report check and the notification summary agree on what a heading is: one
// section's text (a heading and everything up to the next heading of the same or a higher level; code
// is never a heading) and the report's blocks (paragraphs and list items), the unit a "human step"
// must share with a recommendation. Text nested past what the parser takes has no sections.

/**
 * The text under the first heading that matches `name` (same rule as the report check: numbering,
 * emphasis and emoji ignored, prefix match), including its subsections; undefined when absent.
 */
export function sectionText(markdown: string, name: string): string | undefined {
  const wanted = normalizeHeading(name);
  const tokens = (parseMarkdown(markdown) ?? []).map(asMarked);
  const start = tokens.findIndex((t) => {
    if (t.type !== 'heading') return false;
    const h = normalizeHeading(plainText(t));
    return h === wanted || h.startsWith(`${wanted} `);
  });
  const heading = tokens[start];
  if (heading?.type !== 'heading') return undefined;
  const body: string[] = [];
  for (const t of tokens.slice(start + 1)) {
    if (t.type === 'heading' && t.depth <= heading.depth) break;
    body.push(t.raw);
  }
  return body.join('').replace(/^\n+|\n+$/g, '');
}

/** Paragraphs, headings, code and tables as blocks; each list item is its own block (its nested lists too). */
export function blocks(markdown: string): string[] {
  const out: string[] = [];
  const walk = (tokens: Token[]): void => {
    for (const t of tokens.map(asMarked)) {
      if (t.type === 'space' || t.type === 'hr' || t.type === 'def') continue;
      if (t.type === 'blockquote') walk(t.tokens);
      else if (t.type === 'list')
        for (const item of t.items) {
          const own = item.tokens.filter((c) => c.type !== 'list');
          const text = own
            .map((c) => c.raw)
            .join('')
            .trim();
          if (text) out.push(text);
          walk(item.tokens.filter((c) => c.type === 'list'));
        }
      else if (t.raw.trim()) out.push(t.raw.trim());
    }
  };
  walk(parseMarkdown(markdown) ?? []);
  return out;
}
