import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// Per-run bearer tokens: what lets a process outside the daemon (an agent pod) act for one run, and
// only while that run lives. A token is 32 random bytes (base64url); the registry keeps only its
// SHA-256, so a lookup compares digests and a dump of the registry holds no usable token. Each entry
// carries what the token opens (for the kubectl broker, the run's broker socket) and when it expires.
// Small on purpose, so that the model gateway's run tokens can share it later.

export interface TokenGrant<T> {
  runId: string;
  target: T;
  expiresAt: number;
}

export type TokenCheck<T> =
  ({ ok: true } & TokenGrant<T>) | { ok: false; reason: 'missing' | 'unknown' | 'expired'; runId?: string };

/** The SHA-256 (hex) a token is kept by: what a run's records may hold of it. */
export const tokenDigest = (token: string): string =>
  createHash('sha256').update(token, 'utf8').digest('hex');

/** A fresh run token. */
export const newRunToken = (): string => randomBytes(32).toString('base64url');

export class RunTokens<T> {
  private readonly byDigest = new Map<string, TokenGrant<T>>();
  private readonly digestOf = new Map<string, string>();
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  /** Makes a token for `runId` valid until `expiresAt` (replacing the run's previous one). */
  issue(runId: string, target: T, expiresAt: number): string {
    const token = newRunToken();
    this.register(runId, token, target, expiresAt);
    return token;
  }

  /** Registers a token made earlier (a new leader adopting a run whose agent holds it). */
  register(runId: string, token: string, target: T, expiresAt: number): void {
    this.registerDigest(runId, tokenDigest(token), target, expiresAt);
  }

  /** Registers a token by its digest (a new leader that knows it only from the run's records). */
  registerDigest(runId: string, digest: string, target: T, expiresAt: number): void {
    this.revoke(runId);
    this.byDigest.set(digest, { runId, target, expiresAt });
    this.digestOf.set(runId, digest);
  }

  check(token: string | undefined): TokenCheck<T> {
    if (!token) return { ok: false, reason: 'missing' };
    const grant = this.byDigest.get(tokenDigest(token));
    if (!grant) return { ok: false, reason: 'unknown' };
    if (this.now() >= grant.expiresAt) return { ok: false, reason: 'expired', runId: grant.runId };
    return { ok: true, ...grant };
  }

  /** The run's token stops working (the run ended). */
  revoke(runId: string): void {
    const d = this.digestOf.get(runId);
    if (d === undefined) return;
    this.digestOf.delete(runId);
    this.byDigest.delete(d);
  }

  get size(): number {
    return this.digestOf.size;
  }
}

/**
 * The request's bearer token checked against `tokens`; a refusal is logged with `message` (fixed) and
 * why, the run it belonged to when known and the caller's address, never the token itself.
 */
export function checkBearer<T>(
  tokens: RunTokens<T>,
  req: IncomingMessage,
  log: { warn(o: object, m: string): void },
  message: string,
): TokenCheck<T> {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const check = tokens.check(token);
  if (!check.ok)
    log.warn(
      {
        reason: check.reason,
        ...(check.runId ? { runId: check.runId } : {}),
        from: req.socket.remoteAddress,
      },
      message,
    );
  return check;
}
