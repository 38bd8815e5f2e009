// A loopback HTTP server that records every request and answers with a handler: the base of the fake
// model provider servers that the real agent CLIs talk to in the contract tests.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path including the query string. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** What a provider's handler may answer: a JSON body, an SSE stream, or an error status. */
export type ProviderReply =
  | { kind: 'json'; status?: number; body: unknown }
  | { kind: 'sse'; events: { event?: string; data: unknown }[] };

export type ProviderHandler = (req: RecordedRequest) => ProviderReply;

export interface FakeProvider {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  /** Paths no handler recognised (answered 404); a test can assert there were none it cares about. */
  unknown: RecordedRequest[];
  /** While set, every request gets this HTTP status and an error body in the provider's shape. */
  failWith: number | undefined;
  /** While set, every answer waits this long first (a slow model). */
  delayMs?: number;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes on ${req.url ?? ''}`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, reply: ProviderReply): void {
  if (reply.kind === 'json') {
    const status = reply.status ?? 200;
    // Like the real APIs: a client error is final (Claude Code retries 4xx answers without this header).
    const noRetry = status >= 400 && status < 500 ? { 'x-should-retry': 'false' } : {};
    res.writeHead(status, { 'content-type': 'application/json', ...noRetry });
    res.end(JSON.stringify(reply.body));
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const e of reply.events) {
    if (e.event) res.write(`event: ${e.event}\n`);
    res.write(`data: ${JSON.stringify(e.data)}\n\n`);
  }
  res.end();
}

/**
 * Starts a recording server on 127.0.0.1 with a random port. `route` returns undefined for paths the
 * provider does not know (they are answered 404 and listed in `unknown`); `errorBody` shapes the body
 * sent while `failWith` is set.
 */
export async function startProvider(
  route: (req: RecordedRequest) => ProviderReply | undefined,
  errorBody: (status: number) => unknown,
  port = 0,
): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const unknown: RecordedRequest[] = [];
  const provider: FakeProvider = {
    url: '',
    requests,
    unknown,
    failWith: undefined,
    close: () => Promise.resolve(),
  };
  const server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        const rec: RecordedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body,
        };
        requests.push(rec);
        if (provider.failWith !== undefined) {
          send(res, { kind: 'json', status: provider.failWith, body: errorBody(provider.failWith) });
          return;
        }
        const reply = route(rec);
        if (reply === undefined) {
          unknown.push(rec);
          send(res, { kind: 'json', status: 404, body: errorBody(404) });
          return;
        }
        if (provider.delayMs) setTimeout(() => send(res, reply), provider.delayMs);
        else send(res, reply);
      },
      (err: unknown) => {
        res.writeHead(413);
        res.end(String(err));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  provider.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return provider;
}

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (value !== null && typeof value === 'object')
    for (const v of Object.values(value)) collectStrings(v, out);
}

/** Every string value in a request's JSON body (decoded, so a match is a byte-identical match). */
export function jsonStrings(req: RecordedRequest): string[] {
  const out: string[] = [];
  try {
    collectStrings(JSON.parse(req.body), out);
  } catch {
    out.push(req.body);
  }
  return out;
}

/** The first recorded request one of whose JSON string values contains `text` exactly, or undefined. */
export function findRequestContaining(
  requests: RecordedRequest[],
  text: string,
): RecordedRequest | undefined {
  return requests.find((r) => jsonStrings(r).some((s) => s.includes(text)));
}
