import { parseMarkdown, plainText } from '../util/markdown.js';
import { readOwnFile, readOwnFileBelow } from '../util/safe-path.js';

// Checks the agent's report (`output/investigation.md`) against the skill's mandated sections, for
// `result.json.report`. A heading matches a section when, after dropping numbering, emoji and
// punctuation and ignoring case, it starts with the section's name (with or without a parenthetical).
// Headings come from the shared markdown syntax tree (src/util/markdown.ts).

/** A report larger than this is not read (it is refused with the reason). */
export const MAX_REPORT_BYTES = 16 * 1024 * 1024;

export interface ReportCheck {
  /** The path as the agent saw it (recorded in result.json). */
  path: string;
  bytes: number;
  exists: boolean;
  /** The report exists but is smaller than the configured minimum (`agent.min_report_bytes`). */
  tooSmall: boolean;
  /** Exists and is not too small. */
  present: boolean;
  /** Why the file was not read (a symlink, not a regular file, too large). */
  refused?: string;
  /** Mandated sections with no matching heading, in the configured order (all of them when the file is absent). */
  missingSections: string[];
  /** The report as read (when it exists). */
  text?: string;
}

/**
 * Reads the report and lists which of `sections` have no heading; never throws for a missing file.
 * `shownAs` is the path the agent was told (the report's path in its sandbox). With `base` (the
 * workspace), a symbolic link in a folder between it and the report refuses the report with the reason.
 */
export async function checkReport(
  file: string,
  sections: string[],
  minBytes: number,
  shownAs: string = file,
  base?: string,
): Promise<ReportCheck> {
  const read = base
    ? await readOwnFileBelow(base, file, MAX_REPORT_BYTES)
    : await readOwnFile(file, MAX_REPORT_BYTES);
  if (read.kind !== 'ok') {
    return {
      path: shownAs,
      bytes: 0,
      exists: false,
      tooSmall: minBytes > 0,
      present: false,
      missingSections: [...sections],
      ...(read.kind === 'refused' ? { refused: read.reason } : {}),
    };
  }
  const { text } = read;
  const bytes = Buffer.byteLength(text);
  return {
    path: shownAs,
    bytes,
    exists: true,
    tooSmall: bytes < minBytes,
    present: bytes >= minBytes,
    missingSections: missingSections(text, sections),
    text,
  };
}

/** The sections of `sections` that no ATX heading (`#` to `######`, outside code fences) of `markdown` matches. */
export function missingSections(markdown: string, sections: string[]): string[] {
  const headings = markdownHeadings(markdown).map(normalizeHeading);
  return sections.filter((section) => !headings.some((h) => headingMatches(h, section)));
}

/** The report's top-level headings (ATX and setext, never inside code), from the shared syntax tree. */
export function markdownHeadings(markdown: string): string[] {
  // Text nested past what the parser takes is plain text: it has no headings.
  const tokens = parseMarkdown(markdown) ?? [];
  return tokens.flatMap((t) => (t.type === 'heading' ? [plainText(t)] : []));
}

/**
 * Lower-case words only: markdown emphasis, emoji, numbering ("0.", "1)", "Section 2:", "Step 3 -")
 * and punctuation are dropped; "&" reads as "and".
 */
export function normalizeHeading(text: string): string {
  return text
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[*_`~[\]]/g, '')
    .replace(/^[^\p{L}]*(?:(?:section|part|step)\s*[\p{N}]+[^\p{L}]*)?/u, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function headingMatches(normalizedHeading: string, section: string): boolean {
  const full = normalizeHeading(section);
  const core = normalizeHeading(section.replace(/\([^)]*\)/g, ' '));
  return [full, core].some(
    (name) => name.length > 0 && (normalizedHeading === name || normalizedHeading.startsWith(`${name} `)),
  );
}
