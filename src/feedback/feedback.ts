import type { AuditLog } from '../audit/log.js';
import { waitLock } from '../util/file-lock.js';
import { ensureOwnDir } from '../util/safe-path.js';
import {
  FEEDBACK_VERDICTS,
  readFeedback,
  writeFeedback,
  type Feedback,
  type FeedbackInput,
  type FeedbackSource,
  type FeedbackVerdict,
} from '../workspace/feedback.js';
import { feedbackLockPath, triageDir } from '../workspace/layout.js';

// A responder's verdict on an investigation: `.triage/feedback.json` holds the current one (changeable,
// never required; src/workspace/feedback.ts reads and writes it), and every change is an audit event,
// so the history stays in the chain. The grade a verdict is worth is what accuracy over time, the
// ranking of past investigations and promoted eval cases read.

/** What a verdict is worth, out of 100 (a partly right answer counts half). */
export const GRADE: Readonly<Record<FeedbackVerdict, number>> = { correct: 100, partly: 50, wrong: 0 };

const MAX_CAUSE_CHARS = 2000;
const MAX_BY_CHARS = 200;

/** A request body as feedback, or what is wrong with it in words a caller can act on. */
export function parseFeedbackInput(
  body: unknown,
): { ok: true; input: FeedbackInput } | { ok: false; message: string } {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return {
      ok: false,
      message: 'send a JSON object: {"verdict": "correct" | "partly" | "wrong", "cause"?, "by"?}',
    };
  const record = body as Record<string, unknown>;
  const unknownKeys = Object.keys(record).filter((k) => !['verdict', 'cause', 'by'].includes(k));
  if (unknownKeys.length)
    return {
      ok: false,
      message: `unknown field ${unknownKeys.join(', ')}: only verdict, cause and by are read`,
    };
  const { verdict, cause, by } = record;
  if (typeof verdict !== 'string' || !(FEEDBACK_VERDICTS as readonly string[]).includes(verdict))
    return {
      ok: false,
      message: `verdict ${JSON.stringify(verdict ?? null)} is not one of ${FEEDBACK_VERDICTS.join(', ')}`,
    };
  const text = (name: string, value: unknown, max: number): string | { error: string } | undefined => {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') return { error: `${name} must be a string` };
    const trimmed = value.trim();
    if (trimmed.length > max)
      return { error: `${name} is ${trimmed.length} characters; at most ${max} are kept` };
    return trimmed || undefined;
  };
  const c = text('cause', cause, MAX_CAUSE_CHARS);
  const b = text('by', by, MAX_BY_CHARS);
  for (const v of [c, b]) if (typeof v === 'object') return { ok: false, message: v.error };
  return {
    ok: true,
    input: {
      verdict: verdict as FeedbackVerdict,
      ...(typeof c === 'string' ? { cause: c } : {}),
      ...(typeof b === 'string' ? { by: b } : {}),
    },
  };
}

export interface RecordFeedbackDeps {
  audit: Pick<AuditLog, 'append'>;
  now?: () => Date;
  incidentId?: string;
  runId?: string;
}

export type RecordOutcome =
  | { kind: 'recorded'; feedback: Feedback; previous?: Feedback }
  /** The same verdict, cause and author as the current one: nothing written (a repeated click). */
  | { kind: 'unchanged'; feedback: Feedback };

const same = (a: FeedbackInput, b: FeedbackInput): boolean =>
  a.verdict === b.verdict && (a.cause ?? '') === (b.cause ?? '') && (a.by ?? '') === (b.by ?? '');

/**
 * Records `input` as the workspace's current feedback: the file is replaced atomically and a
 * `feedback_recorded` audit event (with the verdict it replaces) is appended. Writers of one workspace
 * are serialised by a lock; giving the same feedback again records nothing.
 */
export async function recordFeedback(
  workspaceDir: string,
  input: FeedbackInput,
  source: FeedbackSource,
  deps: RecordFeedbackDeps,
): Promise<RecordOutcome> {
  const dir = triageDir(workspaceDir);
  await ensureOwnDir(dir, workspaceDir);
  const lock = await waitLock(feedbackLockPath(workspaceDir), {
    staleMs: 30_000,
    waitMs: 5_000,
    what: 'feedback',
  });
  try {
    const previous = await readFeedback(workspaceDir);
    if (previous && same(previous, input)) return { kind: 'unchanged', feedback: previous };
    const feedback: Feedback = {
      ...input,
      source,
      at: (deps.now?.() ?? new Date()).toISOString(),
      ...(deps.runId ? { runId: deps.runId } : {}),
    };
    await writeFeedback(workspaceDir, feedback);
    await deps.audit.append(dir, {
      type: 'feedback_recorded',
      ...(deps.incidentId ? { incidentId: deps.incidentId } : {}),
      ...(deps.runId ? { runId: deps.runId } : {}),
      verdict: feedback.verdict,
      source,
      ...(feedback.cause ? { cause: feedback.cause } : {}),
      ...(feedback.by ? { by: feedback.by } : {}),
      ...(previous ? { replaces: previous.verdict } : {}),
    });
    return { kind: 'recorded', feedback, ...(previous ? { previous } : {}) };
  } finally {
    await lock.release();
  }
}
