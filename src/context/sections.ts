import type { SectionTag } from './types.js';

// The three preloaded sections. Content is data the agent must not mistake for structure, so no
// content can open, close or forge one of our tags: every `<` that starts something that reads as one
// of the tags (`<incident`, `</ incident`, `<INITIAL_TRIAGE_REPORT`, …) is escaped. JSON content gets
// `\u003c`, which keeps the JSON valid and its parsed value identical; text content gets `&lt;`.

export const SECTION_TAGS: readonly SectionTag[] = [
  'incident',
  'kubernetes_cluster_access_permissions',
  'initial_triage_report',
  'previous_investigations',
];

// `<`, optional whitespace, optional `/`, optional whitespace, a tag name, then anything that ends a
// tag name. Case-insensitive: a model reads `</INCIDENT>` as a closing tag too.
const TAG_LIKE = new RegExp(`<(?=\\s*/?\\s*(?:${SECTION_TAGS.join('|')})(?![A-Za-z0-9_-]))`, 'gi');

/** Escapes tag-like sequences in JSON text; the result parses to the same value. */
export function escapeJsonContent(json: string): string {
  return json.replace(TAG_LIKE, '\\u003c');
}

/** Escapes tag-like sequences in plain text (triage output). */
export function escapeTextContent(text: string): string {
  return text.replace(TAG_LIKE, '&lt;');
}

/** `<tag>\n{body}\n</tag>`; the body must already be escaped. */
export function wrapSection(tag: SectionTag, body: string): string {
  return `<${tag}>\n${body}\n</${tag}>`;
}

export function renderIncident(incidentText: string): string {
  return wrapSection('incident', escapeJsonContent(trimEnd(incidentText)));
}

/**
 * The permissions section: the producer's file as is (or what the daemon probed), else a note; the
 * daemon's `notice` (an unreachable cluster) comes first, outside the file's text.
 */
export function renderPermissions(permissionsText: string | undefined, notice?: string): string {
  const lead = notice ? `${escapeTextContent(notice)}\n\n` : '';
  if (permissionsText === undefined) {
    return wrapSection(
      'kubernetes_cluster_access_permissions',
      `${lead}Not provided: the workspace has no valid incident_cluster_permissions.json. Check your access with \`kubectl auth can-i --list\` before relying on it.`,
    );
  }
  return wrapSection(
    'kubernetes_cluster_access_permissions',
    `${lead}${escapeJsonContent(trimEnd(permissionsText))}`,
  );
}

/**
 * The triage section; `note` (status) and `escapedProducts` (the script's files by the agent's path) are
 * ours, `escapedBody` is the output after `escapeTextContent`.
 */
export function renderTriage(note: string | undefined, escapedBody: string, escapedProducts = ''): string {
  const parts = [note, escapedBody, escapedProducts].filter((p): p is string => p !== undefined && p !== '');
  return wrapSection('initial_triage_report', parts.join('\n'));
}

const trimEnd = (text: string): string => text.replace(/\s+$/, '');
