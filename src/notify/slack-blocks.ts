import type { ActionsBlock, KnownBlock, SectionBlock } from '@slack/types';
import { FEEDBACK_ACTION_PREFIX } from '../feedback/slack-interaction.js';
import { evidenceItems, evidenceLine } from '../evidence/summary.js';
import { EVIDENCE_MARK } from './evidence.js';
import { escapeMrkdwn, parseMarkdown, sectionsOf, toMrkdwn } from './mrkdwn.js';
import {
  clipText,
  failureAdvice,
  failureReason,
  formatCost,
  formatDuration,
  formatTokens,
  headline,
  othersNote,
  outcomeOf,
  outcomeWords,
  resourceLabel,
  workloadsLine,
  succeeded,
  summaryText,
  triggerNote,
} from './text.js';
import type { RenderInput } from './types.js';

// The Slack messages of one delivery: a parent message (Block Kit) with the figures and the summary, and
// the full report in its thread, split at the report's sections. Slack's limits: 3,000 characters per
// section text, 2,000 per field, 150 per header, 50 blocks per message, and (measured, not documented)
// about 13,000 characters of block text per message before `msg_blocks_too_long`.

export const SLACK_LIMITS = {
  sectionChars: 3000,
  fieldChars: 2000,
  headerChars: 150,
  blocksPerMessage: 50,
  /** Below the ~13,000 characters Slack accepts across a message's blocks. */
  messageChars: 11_000,
  /** The notification text shown in previews. */
  fallbackChars: 3000,
  /** Thread messages per report; a longer report ends with a note saying where the rest is. */
  threadMessages: 40,
  /** A button's text and value. */
  buttonTextChars: 75,
  buttonValueChars: 2000,
} as const;

/** The feedback buttons' verdicts and labels, in the order shown. */
const FEEDBACK_BUTTONS = [
  ['correct', 'Correct'],
  ['partly', 'Partly'],
  ['wrong', 'Wrong'],
] as const;

export interface SlackMessage {
  text: string;
  blocks: KnownBlock[];
}

const mrkdwn = (text: string) => ({ type: 'mrkdwn' as const, text });
const section = (text: string, expand = false): SectionBlock => ({
  type: 'section',
  text: mrkdwn(clipText(text, SLACK_LIMITS.sectionChars)),
  ...(expand ? { expand: true } : {}),
});
const field = (name: string, value: string) =>
  mrkdwn(clipText(`*${name}*\n${escapeMrkdwn(value)}`, SLACK_LIMITS.fieldChars));

/** The incident's own fields, the same in the running message and the outcome. */
const incidentFields = (input: RenderInput) => [
  field('Resource', resourceLabel(input)),
  field('Cluster', input.incident.cluster),
  field('Fault', input.incident.faultType),
  field('Severity', input.incident.severity),
];

/** The parent message: what happened, to what, the hypothesis and the first action (or why it failed). */
export function parentMessage(input: RenderInput, withThread: boolean): SlackMessage {
  const ok = succeeded(input);
  const { incident, result, summary } = input;
  // Green only for an answer grounded in the cluster; the header says what happened otherwise.
  const words = outcomeWords(outcomeOf(input));
  const blocks: KnownBlock[] = [
    {
      type: 'header',
      text: {
        type: 'plain_text',
        text: clipText(`${words.mark} ${headline(input)}`, SLACK_LIMITS.headerChars),
        emoji: true,
      },
    },
    {
      type: 'section',
      fields: [
        ...incidentFields(input),
        field('Outcome', words.short),
        field('Duration', formatDuration(result?.durationMs)),
        field('Cost', formatCost(result?.costUsd)),
        field('Tokens', formatTokens(result?.tokens)),
        ...(input.resolvedAt ? [field('Alert resolved', input.resolvedAt)] : []),
      ],
    },
  ];
  const workloads = workloadsBlock(input);
  if (workloads) blocks.push(workloads);
  if (!ok) {
    const why = { rejected: 'Why it was rejected', resolved: 'Why it was not run' }[input.state.state];
    blocks.push(section(`*${why ?? 'Why it failed'}*\n${escapeMrkdwn(failureReason(input))}`));
    if (input.state.state !== 'resolved')
      blocks.push(section(`*What to do*\n${escapeMrkdwn(failureAdvice(input))}`));
  }
  if (summary.hypothesis) {
    const confidence = summary.confidence ? ` (confidence: ${escapeMrkdwn(summary.confidence)})` : '';
    const title = summary.source === 'answer' ? "*Agent's answer*" : '*Primary hypothesis*';
    blocks.push(section(`${title}${confidence}\n${escapeMrkdwn(summary.hypothesis)}`));
  }
  if (summary.firstAction) blocks.push(section(`*First action*\n${escapeMrkdwn(summary.firstAction)}`));
  if (result?.evidence) blocks.push(section(escapeMrkdwn(evidenceLine(result.evidence))));
  const context = [
    `incident \`${escapeMrkdwn(incident.incidentId)}\``,
    ...(input.runId ? [`run \`${escapeMrkdwn(input.runId)}\``] : []),
    ...(result ? [`agent ${escapeMrkdwn(result.agent)}`] : []),
    ...(input.statusUrl ? [`<${input.statusUrl}|status page>`] : []),
    ...(withThread && input.report ? ['full report in the thread'] : []),
  ];
  if (input.feedback)
    context.push(
      `rated *${escapeMrkdwn(input.feedback.verdict)}*${input.feedback.by ? ` by ${escapeMrkdwn(input.feedback.by)}` : ''}`,
    );
  blocks.push({
    type: 'context',
    elements: [mrkdwn(clipText(context.join(' · '), SLACK_LIMITS.sectionChars))],
  });
  const buttons = feedbackButtons(input);
  if (buttons) blocks.push(buttons);
  // The top-level text is what notifications and phones show: escaped like the blocks, so the agent's
  // `<!channel>`, `<!here>` and `<https://…|…>` links are shown as text, not acted on.
  return { text: escapeMrkdwn(clipText(summaryText(input), SLACK_LIMITS.fallbackChars)), blocks };
}

/** A storm's incident: every workload that alerted into it (bounded, with the count of the rest). */
function workloadsBlock(input: RenderInput): KnownBlock | undefined {
  const line = workloadsLine(input);
  const count = input.workloads?.length ?? 0;
  return line ? section(`*Workloads (${count})*\n${escapeMrkdwn(line)}`) : undefined;
}

/**
 * Correct / Partly / Wrong under an incident's own answer (not a replay's or a compare cell's): a click
 * comes back to `POST /v1/slack/interactions` as `triage_feedback_<verdict>` with the workspace folder.
 */
export function feedbackButtons(input: RenderInput): ActionsBlock | undefined {
  if (input.trigger === 'replay' || input.trigger === 'compare' || input.label) return undefined;
  // Feedback grades an answer: a failed, rejected or unrun incident has none to grade.
  if (!succeeded(input)) return undefined;
  if (!input.folder || input.folder.length > SLACK_LIMITS.buttonValueChars) return undefined;
  return {
    type: 'actions',
    block_id: 'triage_feedback',
    elements: FEEDBACK_BUTTONS.map(([verdict, label]) => ({
      type: 'button' as const,
      action_id: `${FEEDBACK_ACTION_PREFIX}${verdict}`,
      text: {
        type: 'plain_text' as const,
        text: clipText(
          input.feedback?.verdict === verdict ? `${label} ✓` : label,
          SLACK_LIMITS.buttonTextChars,
        ),
        emoji: true,
      },
      value: input.folder,
      ...(verdict === 'correct'
        ? { style: 'primary' as const }
        : verdict === 'wrong'
          ? { style: 'danger' as const }
          : {}),
    })),
  };
}

/**
 * The parent while the run is going: what is being investigated, where, and the incident's own page.
 * Posted when the run starts; the outcome later replaces it in place (chat.update).
 */
export function runningMessage(input: RenderInput): SlackMessage {
  const { incident } = input;
  const retried = input.state.attempts > 1;
  const what = `${incident.faultType} on ${resourceLabel(input)}${othersNote(input)} (${incident.cluster})`;
  const note = triggerNote(input);
  const title = `${note ? `[${note}] ` : ''}Investigating: ${what}`;
  const workloads = workloadsBlock(input);
  const context = [
    `incident \`${escapeMrkdwn(incident.incidentId)}\``,
    `run \`${escapeMrkdwn(input.runId)}\``,
    ...(input.statusUrl ? [`<${input.statusUrl}|status page>`] : []),
    'the answer replaces this message when the run ends',
  ];
  const blocks: KnownBlock[] = [
    {
      type: 'header',
      text: { type: 'plain_text', text: clipText(`⏳ ${title}`, SLACK_LIMITS.headerChars), emoji: true },
    },
    {
      type: 'section',
      fields: [
        ...incidentFields(input),
        field('State', 'running'),
        ...(retried ? [field('Attempt', String(input.state.attempts))] : []),
      ],
    },
    ...(workloads ? [workloads] : []),
    { type: 'context', elements: [mrkdwn(clipText(context.join(' · '), SLACK_LIMITS.sectionChars))] },
  ];
  const text = `Investigation running${retried ? ` (attempt ${input.state.attempts})` : ''}: ${what}.`;
  return { text: escapeMrkdwn(clipText(text, SLACK_LIMITS.fallbackChars)), blocks };
}

/** A retry's note in the thread when its run starts: the parent above says running again. */
export function retryStartedMessage(input: RenderInput): SlackMessage {
  const text = `Retried: run ${input.runId} (attempt ${input.state.attempts}) started; its answer will update the message above.`;
  return { text: escapeMrkdwn(text), blocks: [section(`🔁 ${escapeMrkdwn(text)}`)] };
}

/** A resolution's note in the thread under the parent. */
export function resolvedMessage(input: RenderInput): SlackMessage {
  const text = `Every alert behind this incident resolved at ${input.resolvedAt ?? 'an unknown time'}; the investigation above ended ${input.state.state} (run ${input.runId}).`;
  return { text: escapeMrkdwn(text), blocks: [section(`✅ ${escapeMrkdwn(text)}`)] };
}

/** The report as thread messages, each within the block, character and block-count limits. */
export function threadMessages(input: RenderInput): SlackMessage[] {
  if (!input.report?.trim()) return [];
  const evidence = evidenceMessage(input);
  const texts = packMessages(reportSections(input.report));
  const kept = texts.slice(0, SLACK_LIMITS.threadMessages - (evidence ? 1 : 0));
  const dropped = texts.length - kept.length;
  const notes: string[] = [];
  if (input.reportTruncated)
    notes.push(
      `The report is ${input.reportTruncated.bytes} bytes; the first ${Buffer.byteLength(input.report)} (notify.max_report_bytes) are above.`,
    );
  if (dropped > 0)
    notes.push(`${dropped} more part${dropped === 1 ? '' : 's'} of the report are not posted.`);
  if (notes.length > 0) {
    notes.push(`The full report is output/investigation.md in the workspace ${input.folder}.`);
    const last = kept[kept.length - 1];
    const note = `_${escapeMrkdwn(notes.join(' '))}_`;
    if (
      last &&
      last.length < SLACK_LIMITS.blocksPerMessage - 1 &&
      total(last) + note.length <= SLACK_LIMITS.messageChars
    )
      last.push(note);
    else kept.push([note]);
  }
  const parts: SlackMessage[] = kept.map((sections, i) => ({
    text: `Investigation report, part ${i + 1} of ${kept.length}`,
    blocks: [
      {
        type: 'context',
        elements: [mrkdwn(`Report part ${i + 1}/${kept.length} · output/investigation.md`)],
      },
      ...sections.map((text) => section(text, true)),
    ],
  }));
  return evidence ? [evidence, ...parts] : parts;
}

/** Items of the evidence list in one thread message; the rest are counted (all are in result.json). */
const EVIDENCE_ITEMS_SHOWN = 25;

/** First in the thread: every citation that did not hold and every gap, when there are any. */
function evidenceMessage(input: RenderInput): SlackMessage | undefined {
  const evidence = input.result?.evidence;
  const items = evidence ? evidenceItems(evidence) : [];
  if (!evidence || items.length === 0) return undefined;
  const shown = items.slice(0, EVIDENCE_ITEMS_SHOWN).map((item) => `• ${escapeMrkdwn(item)}`);
  if (items.length > shown.length)
    shown.push(`_${items.length - shown.length} more in result.json (\`evidence\`)_`);
  // Lines joined into sections of at most 3,000 characters (25 items of at most ~300 stay under a message's limit).
  const sections: string[] = [];
  for (const line of shown) {
    const last = sections.at(-1);
    if (last !== undefined && last.length + 1 + line.length <= SLACK_LIMITS.sectionChars)
      sections[sections.length - 1] = `${last}\n${line}`;
    else sections.push(line);
  }
  return {
    text: `Evidence: ${evidence.verdict}, ${items.length} point${items.length === 1 ? '' : 's'} not verified`,
    blocks: [
      {
        type: 'context',
        elements: [
          mrkdwn(
            `${EVIDENCE_MARK[evidence.verdict]} Evidence: ${evidence.verdict} · what the check could not verify`,
          ),
        ],
      },
      ...sections.map((text) => section(text)),
    ],
  };
}

const total = (texts: string[]): number => texts.reduce((n, t) => n + t.length, 0);

/** The report's top-level sections (split at `#` and `##`), each as section texts of at most 3,000 characters. */
export function reportSections(markdown: string): string[][] {
  const tokens = parseMarkdown(markdown);
  // Text nested too deep to parse is posted as it is, escaped.
  if (!tokens)
    return [
      joinPieces(splitText(escapeMrkdwn(markdown), SLACK_LIMITS.sectionChars), SLACK_LIMITS.sectionChars),
    ];
  return sectionsOf(tokens, 2).map((s) => {
    const pieces = [...(s.heading ? [s.heading] : []), ...s.tokens]
      .map((node) => toMrkdwn(node).trim())
      .filter((text) => text.length > 0);
    return joinPieces(
      pieces.flatMap((piece) => splitText(piece, SLACK_LIMITS.sectionChars)),
      SLACK_LIMITS.sectionChars,
    );
  });
}

/** Joins consecutive pieces with blank lines while they fit in `max`. */
function joinPieces(pieces: string[], max: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const piece of pieces) {
    const next = current ? `${current}\n\n${piece}` : piece;
    if (next.length <= max) current = next;
    else {
      if (current) out.push(current);
      current = piece;
    }
  }
  if (current) out.push(current);
  return out;
}

/**
 * Packs sections into messages: a section that fits in the current message joins it, one that fits in a
 * message starts the next one, and one larger than a message continues the current message and spans as
 * many as it needs, split between its section texts.
 */
export function packMessages(sections: string[][]): string[][] {
  const messages: string[][] = [];
  let current: string[] = [];
  const fits = (texts: string[], more: string[]) =>
    texts.length + more.length <= SLACK_LIMITS.blocksPerMessage - 1 &&
    total(texts) + total(more) <= SLACK_LIMITS.messageChars;
  for (const texts of sections) {
    if (texts.length === 0) continue;
    if (fits(current, texts)) {
      current.push(...texts);
      continue;
    }
    // A section that fits in a message of its own starts one; a longer one is split anyway, so it
    // fills the current message first.
    if (fits([], texts) && current.length > 0) {
      messages.push(current);
      current = [];
    }
    for (const text of texts) {
      if (!fits(current, [text])) {
        messages.push(current);
        current = [];
      }
      current.push(text);
    }
  }
  if (current.length > 0) messages.push(current);
  return messages;
}

const FENCE = '```';

/**
 * Splits mrkdwn into pieces of at most `max` characters at line ends; a code block is re-fenced in each
 * piece, and a single longer line is cut without splitting an `&amp;` entity or a surrogate pair.
 */
export function splitText(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  if (text.startsWith(`${FENCE}\n`) && text.endsWith(`\n${FENCE}`)) {
    const inner = text.slice(FENCE.length + 1, -(FENCE.length + 1));
    return splitText(inner, max - 2 * (FENCE.length + 1)).map((c) => `${FENCE}\n${c}\n${FENCE}`);
  }
  const out: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    for (const piece of cutLine(line, max)) {
      const next = current ? `${current}\n${piece}` : piece;
      if (next.length <= max) current = next;
      else {
        out.push(current);
        current = piece;
      }
    }
  }
  if (current) out.push(current);
  return out;
}

function cutLine(line: string, max: number): string[] {
  const out: string[] = [];
  let rest = line;
  while (rest.length > max) {
    let end = max;
    const amp = rest.lastIndexOf('&', end);
    if (amp > end - 5 && /^&(?:amp|lt|gt);/.test(rest.slice(amp))) end = amp;
    const code = rest.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end -= 1;
    out.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  out.push(rest);
  return out;
}
