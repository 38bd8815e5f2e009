import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';

// The pod programs' one HTTP call to the daemon (node builtins only): a request with the run's files
// token, its answer as a stream, or the daemon's refusal as an error that says whether trying again can
// help (the daemon restarting, a leader changing) or not (a bad token, a run that is over).

/** The daemon answered with an error status. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    text: string,
  ) {
    super(`the daemon answered ${status}: ${text.trim() || '(no text)'}`);
    this.name = 'Refusal';
  }

  /** A bad token, a run that is over, a request it will never take: trying again cannot help. */
  get final(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}

const REFUSAL_TEXT_BYTES = 4096;

async function textOf(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of res) {
    if (size < REFUSAL_TEXT_BYTES) chunks.push(c as Buffer);
    size += (c as Buffer).length;
  }
  return Buffer.concat(chunks).subarray(0, REFUSAL_TEXT_BYTES).toString('utf8');
}

/**
 * Sends one request to `url` with the token; resolves with the answer when it is 200 (its body unread),
 * rejects with a Refusal for another status, or with the network error.
 */
export function call(
  url: string,
  options: { method: 'GET' | 'POST'; token: string; body?: Buffer; timeoutMs: number },
): Promise<IncomingMessage> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: options.method,
        headers: {
          authorization: `Bearer ${options.token}`,
          ...(options.body
            ? { 'content-type': 'application/octet-stream', 'content-length': options.body.length }
            : {}),
        },
        timeout: options.timeoutMs,
        // No pooled keep-alive socket (Node 20's default agent keeps one): it would hold the init
        // container's process open after its files are fetched, and the pod would never start its agent.
        agent: false,
      },
      (res) => {
        if (res.statusCode === 200) return resolve(res);
        textOf(res).then(
          (text) => reject(new Refusal(res.statusCode ?? 0, text)),
          (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
