import { normalizeHeading } from '../audit/report.js';
import { plainText, type Token, type Tokens } from '../util/markdown.js';

// Finding the parts of a report that its readers look for (the headline, the first action): a heading
// by name and the nodes under it, the first paragraph, the first cell of a named column.

export interface Block {
  heading: Tokens.Heading;
  nodes: Token[];
}

export const isHeading = (token: Token | undefined): token is Tokens.Heading => token?.type === 'heading';

/** Heading text compared without numbering, emoji or punctuation (the same rule as the report check). */
export const named = (heading: Tokens.Heading, ...names: string[]): boolean => {
  const text = normalizeHeading(plainText(heading.tokens));
  return names.some((name) => text === name || text.startsWith(`${name} `));
};

/** The first heading among `nodes` that `match` accepts, with the nodes under it (to the next heading of its level). */
export function findBlock(nodes: Token[], match: (heading: Tokens.Heading) => boolean): Block | undefined {
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (!isHeading(node) || !match(node)) continue;
    const under: Token[] = [];
    for (const next of nodes.slice(i + 1)) {
      if (isHeading(next) && next.depth <= node.depth) break;
      under.push(next);
    }
    return { heading: node, nodes: under };
  }
  return undefined;
}

export const findNamed = (nodes: Token[], ...names: string[]): Block | undefined =>
  findBlock(nodes, (h) => named(h, ...names));

/** The text of the first paragraph (or list item) among `nodes`. */
export function firstText(nodes: Token[]): string | undefined {
  for (const node of nodes) {
    if (node.type === 'paragraph' || node.type === 'text') {
      const text = plainText(node);
      if (text) return text;
    }
    if (node.type === 'list') {
      const item = (node as Tokens.List).items[0];
      if (item) return plainText(item.tokens);
    }
  }
  return undefined;
}

/** The first body row's cell under the column named `column` (else the second column) of the first table. */
export function firstTableCell(nodes: Token[], column: string): string | undefined {
  const table = nodes.find((n): n is Tokens.Table => n.type === 'table');
  const first = table?.rows[0];
  if (!table || !first) return undefined;
  const names = table.header.map((cell) => normalizeHeading(plainText(cell.tokens)));
  let index = names.indexOf(column);
  if (index < 0) index = Math.min(1, first.length - 1);
  const cell = first[index];
  const text = cell ? plainText(cell.tokens) : '';
  return text || undefined;
}
