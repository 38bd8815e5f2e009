// `replay`: re-runs a saved incident into a new workspace through the daemon's own pipeline.
//   source.ts   what is replayed (a workspace, a run bundle, an example) and what it says of itself
//   out-dir.ts  the new workspace folder and the inputs copied into it
//   prompt.ts   the prompt a run sent, its hash, and where two differ
//   options.ts  what a replay is asked for, needs and answers
//   replay.ts   the replay itself;  format.ts  its outcome as the command prints it
export { formatReplay } from './format.js';
export type { ReplayDeps, ReplayOptions, ReplayResult, TriageChoice } from './options.js';
export { chooseOutDir } from './out-dir.js';
export { firstDifference, promptSha256, readSentPrompt, type PromptHash } from './prompt.js';
export { replay, replayRunId } from './replay.js';
export {
  ReplayUsageError,
  resolveReplaySource,
  SAVED_TRIAGE_LOG,
  type ReplaySource,
  type ReplaySourceKind,
} from './source.js';
