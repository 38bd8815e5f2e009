import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { RunTokens, checkBearer } from '../../../kubectl/broker/tokens.js';
import type { ReturnedRecord } from '../../../workspace/run-record.js';
import { errorMessage } from '../../../util/errors.js';
import { readLimitedBody } from '../../../util/http-limits.js';
import { InputsTooLarge, inputStream, listInputs } from './inputs.js';
import { decodeUpload, takeUpload } from './outputs.js';
import { FILES_PREFIX, FrameError, INPUTS_PATH, OUTPUTS_PATH } from './protocol.js';
import type { RunFilesAccess, RunFilesGrant, RunFilesRoute } from './types.js';

// The daemon's side of an agent pod's files, on the pod port (the kubectl broker's, kubernetes.broker):
// `GET /v1/run-files/inputs` sends the run's files, `POST /v1/run-files/outputs` takes what its agent
// wrote. Each call carries the run's files token (`Authorization: Bearer`), which opens that run's paths
// only, until the run ends or its time is up: a missing, unknown or expired token gets 401 and nothing.
// A run's uploads are taken one at a time; once the run is being collected none is taken any more.

export interface RunFilesLimits {
  /** What one run's pod may be sent (kubernetes.run_files.max_input_bytes). */
  maxInputBytes: number;
  /** What one run's pod may return in all (kubernetes.run_files.max_output_bytes). */
  maxOutputBytes: number;
  /** Files and folders of one mount, at most. */
  maxEntries?: number;
}

interface Held {
  grant: RunFilesGrant;
  record: ReturnedRecord;
  closed: boolean;
  /** The run's uploads, one after the other. */
  queue: Promise<unknown>;
}

const WHY = {
  missing:
    "the call carries no run token (Authorization: Bearer …); only a running investigation's pod may call",
  unknown: 'the run token is not one of a running investigation; nothing was sent or taken',
  expired: 'the run token has expired (its run is over or past its time limit); nothing was sent or taken',
} as const;

const BODY_TIMEOUT_MS = 30_000;

const emptyRecord = (): ReturnedRecord => ({ uploads: 0, final: false, files: {}, refused: [] });

function answer(
  res: ServerResponse,
  status: number,
  body: unknown,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent) return void res.destroy();
  const text = typeof body === 'string' ? `run-files: ${body}\n` : `${JSON.stringify(body)}\n`;
  const type = typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...extra });
  res.end(text);
}

export function createRunFilesRoute(options: {
  limits: RunFilesLimits;
  log: { warn(o: object, m: string): void };
  now?: () => number;
}): RunFilesRoute {
  const { limits, log } = options;
  const now = options.now ?? Date.now;
  const tokens = new RunTokens<Held>({ now });

  const sendInputs = async (held: Held, res: ServerResponse): Promise<void> => {
    if (!held.grant.serveInputs)
      return answer(
        res,
        410,
        "this run's files are no longer served: the daemon that launched it is gone, and the one that adopted it takes back only what the pod returns",
      );
    let listing;
    try {
      listing = await listInputs(held.grant, {
        maxBytes: limits.maxInputBytes,
        maxEntries: limits.maxEntries ?? 100_000,
      });
    } catch (err) {
      if (err instanceof InputsTooLarge) return answer(res, 413, err.message);
      throw err;
    }
    if (listing.left.length > 0)
      log.warn(
        { runId: held.grant.runId, left: listing.left.slice(0, 20) },
        "links in the run's files were not sent",
      );
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' });
    // A file that changes while it is read ends the stream short of its end record: the pod asks again.
    await pipeline(Readable.from(inputStream(listing)), createGzip(), res).catch((err: unknown) =>
      log.warn({ runId: held.grant.runId, err: errorMessage(err) }, "sending the run's files failed"),
    );
  };

  const takeOutputs = async (held: Held, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (held.closed)
      return answer(res, 409, "the run's outputs were already collected; nothing more is taken");
    const body = await readLimitedBody(req, limits.maxOutputBytes + 1024 * 1024, BODY_TIMEOUT_MS);
    if (body === undefined) return answer(res, 408, `the upload was not read within ${BODY_TIMEOUT_MS} ms`);
    if (body === 'too large')
      return answer(res, 413, `the upload is larger than ${limits.maxOutputBytes} bytes`);
    let upload;
    try {
      upload = decodeUpload(body, limits.maxOutputBytes);
    } catch (err) {
      if (err instanceof FrameError)
        return answer(res, err.tooLarge ? 413 : 400, `the upload was refused: ${err.message}`);
      throw err;
    }
    // Taken one at a time, each from the record the last one left.
    const step = held.queue.then(async () => {
      if (held.closed) return undefined;
      const taken = await takeUpload(upload, held.grant, held.record, {
        maxBytes: limits.maxOutputBytes,
        now: new Date(now()),
      });
      held.record = taken.record;
      await held.grant.onReturned(taken.record);
      return taken;
    });
    held.queue = step.catch(() => undefined);
    const taken = await step;
    if (!taken) return answer(res, 409, "the run's outputs were already collected; nothing more is taken");
    if (taken.refused.length > 0)
      log.warn({ runId: held.grant.runId, refused: taken.refused }, 'returned files refused');
    answer(res, 200, { taken: taken.taken, refused: taken.refused });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://pod');
    const method = url.pathname === INPUTS_PATH ? 'GET' : url.pathname === OUTPUTS_PATH ? 'POST' : undefined;
    if (!method)
      return answer(
        res,
        404,
        `no such endpoint ${url.pathname}; use GET ${INPUTS_PATH} or POST ${OUTPUTS_PATH}`,
      );
    if (req.method !== method) return answer(res, 405, `use ${method} ${url.pathname}`, { allow: method });
    const check = checkBearer(tokens, req, log, 'run files call refused: bad run token');
    if (!check.ok) return answer(res, 401, WHY[check.reason], { 'www-authenticate': 'Bearer' });
    if (method === 'GET') return sendInputs(check.target, res);
    return takeOutputs(check.target, req, res);
  };

  return {
    prefix: FILES_PREFIX,
    handle: (req, res) =>
      void handle(req, res).catch((err: unknown) => {
        log.warn({ err: errorMessage(err) }, 'run files call failed');
        answer(res, 500, `the daemon failed to handle the call (${errorMessage(err)})`);
      }),
    open: (tokenSha256, grant, expiresAt): RunFilesAccess => {
      const held: Held = {
        grant,
        record: grant.returned ?? emptyRecord(),
        closed: false,
        queue: Promise.resolve(),
      };
      tokens.registerDigest(grant.runId, tokenSha256, held, expiresAt);
      return {
        close: async () => {
          held.closed = true;
          await held.queue;
          return held.record;
        },
        revoke: () => tokens.revoke(grant.runId),
      };
    },
  };
}
