import { markdownLines, normalizeHeading, type MarkdownLine } from '../../audit/report.js';

// The pieces of a report the scorer reads: one section's text (a heading and everything up to the
// next heading of the same or a higher level, outside code fences) and the report's blocks
// (paragraphs and list items), the unit a "human step" must share with a recommendation.

/**
 * The text under the first heading that matches `name` (same rule as the report check: numbering,
 * emphasis and emoji ignored, prefix match), including its subsections; undefined when absent.
 */
export function sectionText(markdown: string, name: string): string | undefined {
  const wanted = normalizeHeading(name);
  const all = markdownLines(markdown);
  const start = all.findIndex((l) => {
    if (l.level === 0) return false;
    const h = normalizeHeading(l.heading);
    return h === wanted || h.startsWith(`${wanted} `);
  });
  if (start === -1) return undefined;
  const level = (all[start] as MarkdownLine).level;
  const body: string[] = [];
  for (const l of all.slice(start + 1)) {
    if (l.level > 0 && l.level <= level) break;
    body.push(l.text);
  }
  return body.join('\n');
}

/** Paragraphs and list items (a list item keeps its continuation lines). */
export function blocks(markdown: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length > 0) out.push(current.join('\n'));
    current = [];
  };
  for (const l of markdownLines(markdown)) {
    if (l.text.trim() === '' || l.level > 0) {
      flush();
      if (l.level > 0) out.push(l.text);
      continue;
    }
    if (/^\s{0,3}([-*+]|\d+[.)])\s+/.test(l.text)) flush();
    current.push(l.text);
  }
  flush();
  return out;
}
