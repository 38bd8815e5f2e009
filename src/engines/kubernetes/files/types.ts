import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ReturnedRecord } from '../../../workspace/run-record.js';

// What a run opens to its agent pod on the daemon's files route (route.ts), and what it gets back.

/** One of the agent's mounts, as the route copies it: a source of the daemon's at the agent's target. */
export interface FilesMount {
  source: string;
  target: string;
  /** Read-only mounts are sent; writable ones are sent and what the agent writes in them is taken back. */
  readOnly: boolean;
  /** Of a folder, the only entries (first path components) the agent reads; absent: all. */
  only?: readonly string[];
  /** Of a folder, entries (first path components) that are the daemon's own, never sent. */
  except?: readonly string[];
}

export interface RunFilesGrant {
  runId: string;
  workspaceDir: string;
  mounts: readonly FilesMount[];
  /** The agent's stdin, sent as the file at STDIN_PATH. */
  stdin?: string;
  /**
   * Whether the pod may fetch its inputs: false for a run a new daemon adopted (it has the mounts, not
   * the launching daemon's stdin), which only takes back what the pod returns.
   */
  serveInputs: boolean;
  /** What came back before (an adopted run's record). */
  returned?: ReturnedRecord;
  /** Called with the run's record after each upload taken; the pod is answered once it resolves. */
  onReturned(record: ReturnedRecord): Promise<void>;
}

/** A run's access on the route, from the moment its token is known until the run ends. */
export interface RunFilesAccess {
  /** Takes no more uploads (the run is being collected); what came back. Idempotent. */
  close(): Promise<ReturnedRecord>;
  /** The token opens nothing any more. Idempotent. */
  revoke(): void;
}

export interface RunFilesRoute {
  /** Requests whose path begins with it are the route's (FILES_PREFIX). */
  readonly prefix: string;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Opens `grant` to the holder of the token whose SHA-256 (hex) is `tokenSha256`, until `expiresAt`. */
  open(tokenSha256: string, grant: RunFilesGrant, expiresAt: number): RunFilesAccess;
}
