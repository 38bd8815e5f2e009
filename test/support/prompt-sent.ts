import type { PromptParts } from '../../src/shared/types.js';

// Reads both parts back from a prompt-sent.md: tests use it to prove the rendering for people holds
// the prompt byte for byte (nothing in src/ parses the markdown back).

function extractFenced(text: string, heading: string, from: number): { value: string; end: number } {
  const marker = `\n${heading}\n\n`;
  const at = from === 0 && text.startsWith(marker.slice(1)) ? -1 : text.indexOf(marker, from);
  if (at < 0 && !(from === 0 && text.startsWith(marker.slice(1)))) {
    throw new Error(
      `prompt-sent.md has no "${heading}" section; expected a line "${heading}" followed by a fenced block`,
    );
  }
  const open = at + marker.length;
  const fenceMatch = /^(`{3,})text\n/.exec(text.slice(open, open + 200));
  if (!fenceMatch?.[1]) throw new Error(`prompt-sent.md: "${heading}" is not followed by a \`\`\`text fence`);
  const fence = fenceMatch[1];
  const start = open + fenceMatch[0].length;
  const close = text.indexOf(`\n${fence}\n`, start);
  if (close < 0) throw new Error(`prompt-sent.md: the fence under "${heading}" is never closed`);
  // The content never holds a backtick run as long as the fence, so the first closing fence is ours.
  return { value: text.slice(start, close), end: close + fence.length + 2 };
}

/** Reads both parts back from a prompt-sent.md, byte-identical to what was rendered. */
export function parsePromptSent(text: string): PromptParts {
  const system = extractFenced(text, '## System prompt', 0);
  const user = extractFenced(text, '## User prompt', system.end - 1);
  return { system: system.value, user: user.value };
}
