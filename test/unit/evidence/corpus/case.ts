import type { Evidence, EvidenceClaim } from '../../../../src/workspace/run-record.js';
import type { RunSpec } from '../../../support/evidence-runs.js';

/** One report over one recorded run, with the verdict a careful on-call engineer would give. */
export interface CorpusCase {
  name: string;
  /** The class of report it stands for. */
  kind: string;
  /** A report whose author said only what the run showed. */
  honest: boolean;
  report: string;
  run: RunSpec;
  expect: Evidence['verdict'];
  /** A claim and the status it must have (`headline` for the headline). */
  claim?: { id: string; status: EvidenceClaim['status']; why?: RegExp };
}
