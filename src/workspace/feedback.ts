import { PRIVATE_FILE_MODE, writeFileAtomic } from '../util/fs.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import { feedbackPath } from './layout.js';

// The feedback record: `.triage/feedback.json`, the responders' current verdict on the latest answer
// (changeable, never required). src/feedback/feedback.ts records a change (with its lock and audit
// event); this module reads and writes the file.

export const FEEDBACK_VERDICTS = ['correct', 'partly', 'wrong'] as const;
export type FeedbackVerdict = (typeof FEEDBACK_VERDICTS)[number];
/** Where a verdict was given. */
export type FeedbackSource = 'api' | 'page' | 'slack' | 'cli';

export interface FeedbackInput {
  verdict: FeedbackVerdict;
  /** The cause responders established, in their words. */
  cause?: string;
  by?: string;
}

export interface Feedback extends FeedbackInput {
  source: FeedbackSource;
  /** When it was given (ISO-8601). */
  at: string;
  /** The run whose answer it grades (the latest run when it was given). */
  runId?: string;
}

/** feedback.json holds one verdict and a cause of at most 2,000 characters. */
const MAX_FILE_BYTES = 16 * 1024;

function isFeedback(value: unknown): value is Feedback {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.verdict === 'string' &&
    (FEEDBACK_VERDICTS as readonly string[]).includes(v.verdict) &&
    typeof v.at === 'string' &&
    typeof v.source === 'string' &&
    (v.cause === undefined || typeof v.cause === 'string') &&
    (v.by === undefined || typeof v.by === 'string')
  );
}

/**
 * The current feedback of a workspace, read without following a link and within 16 KiB; undefined when
 * none was given (or the file is unreadable).
 */
export async function readFeedback(workspaceDir: string): Promise<Feedback | undefined> {
  const read = await readOwnFileBelow(workspaceDir, feedbackPath(workspaceDir), MAX_FILE_BYTES).catch(
    () => undefined,
  );
  if (read?.kind !== 'ok') return undefined;
  try {
    const parsed: unknown = JSON.parse(read.text);
    return isFeedback(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces feedback.json atomically; the workspace's `.triage/` must exist (it is never re-created). */
export const writeFeedback = (workspaceDir: string, feedback: Feedback): Promise<void> =>
  writeFileAtomic(feedbackPath(workspaceDir), `${JSON.stringify(feedback, null, 2)}\n`, PRIVATE_FILE_MODE, {
    createDir: false,
  });
