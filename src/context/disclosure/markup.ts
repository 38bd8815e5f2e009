// Small text helpers shared by the disclosure renderers.

/** Code-point order: deterministic whatever the locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Escapes a value for a double-quoted attribute. */
export function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// Tags the prompt's structure is made of (ours and the preloaded sections around them). Like the
// section escaping, whitespace around the `/` (`</ brief>`, `< /incident>`) still reads as a tag.
const STRUCTURAL_TAG =
  /<(\s*\/?\s*)(brief|briefs|ref|refs|also|skill|skills|persona|workflows|incident|kubernetes_cluster_access_permissions|initial_triage_report)(?![A-Za-z0-9_-])/gi;

/**
 * Neutralises structural tags inside injected file content so that a brief or SKILL.md cannot close
 * its own element or forge another one; everything else is left verbatim.
 */
export function escapeContent(text: string): string {
  return text.replace(STRUCTURAL_TAG, '&lt;$1$2');
}
