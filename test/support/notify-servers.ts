// Local stand-ins for the three sinks, each speaking its provider's API as far as the notifier uses
// it and enforcing the limits the provider enforces: the Slack Web API (chat.postMessage, chat.update,
// conversations.history/replies), a webhook receiver that verifies signatures the documented way, and
// PagerDuty's Events API v2 and REST notes. Each records every request and can fail or hold on demand.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  raw: string;
  /** Parsed body: JSON, or the fields of a form (JSON-valued fields parsed). */
  body: Record<string, unknown>;
  at: number;
}

/** What to do with the next matching request instead of answering normally. */
export type Override =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  | { kind: 'slack-error'; error: string }
  /** Never answer (the request is recorded; `apply` decides whether it takes effect first). */
  | { kind: 'hold'; apply: boolean };

interface PendingOverride {
  match: (r: Recorded) => boolean;
  override: Override;
  remaining: number;
}

abstract class StandIn {
  readonly requests: Recorded[] = [];
  private server?: Server;
  private readonly overrides: PendingOverride[] = [];
  private readonly held = new Set<ServerResponse>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.receive(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The next `times` requests matching `match` get `override`. */
  on(match: (r: Recorded) => boolean, override: Override, times = 1): void {
    this.overrides.push({ match, override, remaining: times });
  }

  /** Resolves when `count` requests matching `match` have arrived (deadline in ms). */
  async waitFor(match: (r: Recorded) => boolean, count = 1, timeoutMs = 20_000): Promise<Recorded[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.requests.filter(match);
      if (found.length >= count) return found;
      if (Date.now() > deadline)
        throw new Error(`waited ${timeoutMs} ms for ${count} matching request(s), saw ${found.length}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  protected abstract handle(r: Recorded, res: ServerResponse): void;
  /** Applies a held request's effect (e.g. stores the Slack message) without answering. */
  protected abstract apply(r: Recorded): void;

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(',') : (v ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    const r: Recorded = {
      method: req.method ?? 'GET',
      path: url.pathname,
      headers,
      raw,
      body: parseBody(raw, headers['content-type'] ?? ''),
      at: Date.now(),
    };
    this.requests.push(r);
    const pending = this.overrides.find((o) => o.remaining > 0 && o.match(r));
    if (pending) {
      pending.remaining--;
      const o = pending.override;
      if (o.kind === 'hold') {
        if (o.apply) this.apply(r);
        this.held.add(res);
        return;
      }
      if (o.kind === 'slack-error') return json(res, 200, { ok: false, error: o.error });
      res.writeHead(o.status, { 'content-type': 'application/json', ...(o.headers ?? {}) });
      res.end(o.body ?? '{}');
      return;
    }
    this.handle(r, res);
  }
}

function parseBody(raw: string, type: string): Record<string, unknown> {
  if (type.includes('application/x-www-form-urlencoded')) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(raw)) {
      try {
        out[k] = ['blocks', 'metadata', 'attachments'].includes(k) ? JSON.parse(v) : v;
      } catch {
        out[k] = v;
      }
    }
    return out;
  }
  try {
    const value = JSON.parse(raw) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export interface SlackStoredMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  text: string;
  blocks: { type: string; text?: { text: string }; fields?: { text: string }[] }[];
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
}

/** Slack's limits, enforced as Slack answers them (ok: false with its error code). */
const LIMIT = { section: 3000, field: 2000, fields: 10, header: 150, blocks: 50, blockChars: 13_000 };

/** The Slack Web API methods the notifier calls. `#names` resolve to the channel ID below. */
export class SlackApi extends StandIn {
  static readonly CHANNEL_ID = 'C0NOTIFY01';
  readonly messages: SlackStoredMessage[] = [];
  private seq = 0;

  constructor(readonly token: string) {
    super();
  }

  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  /** Posts seen by the API (requests, including refused ones). */
  posts(): Recorded[] {
    return this.requests.filter((r) => r.path === '/api/chat.postMessage');
  }

  protected apply(r: Recorded): void {
    if (r.path === '/api/chat.postMessage') this.store(r);
  }

  private store(r: Recorded): SlackStoredMessage {
    const b = r.body as Record<string, unknown>;
    const message: SlackStoredMessage = {
      channel: this.channelId(String(b.channel)),
      ts: `${Math.floor(Date.now() / 1000)}.${String(++this.seq).padStart(6, '0')}`,
      text: String(b.text ?? ''),
      blocks: (b.blocks as SlackStoredMessage['blocks']) ?? [],
      ...(b.thread_ts ? { thread_ts: String(b.thread_ts) } : {}),
      ...(b.metadata ? { metadata: b.metadata as SlackStoredMessage['metadata'] } : {}),
    };
    this.messages.push(message);
    return message;
  }

  private channelId(channel: string): string {
    return channel.startsWith('#') ? SlackApi.CHANNEL_ID : channel;
  }

  protected handle(r: Recorded, res: ServerResponse): void {
    if (r.headers.authorization !== `Bearer ${this.token}`)
      return json(res, 200, { ok: false, error: 'invalid_auth' });
    const b = r.body as Record<string, unknown>;
    switch (r.path) {
      case '/api/chat.postMessage': {
        const problem = blockProblem(b.blocks);
        if (problem) return json(res, 200, { ok: false, error: problem });
        if (String(b.text ?? '').length > 40_000) return json(res, 200, { ok: false, error: 'msg_too_long' });
        if (b.thread_ts && !this.messages.some((m) => m.ts === b.thread_ts && !m.thread_ts))
          return json(res, 200, { ok: false, error: 'thread_not_found' });
        const m = this.store(r);
        return json(res, 200, { ok: true, channel: m.channel, ts: m.ts, message: { text: m.text } });
      }
      case '/api/chat.update': {
        const problem = blockProblem(b.blocks);
        if (problem) return json(res, 200, { ok: false, error: problem });
        const m = this.messages.find((x) => x.channel === this.channelId(String(b.channel)) && x.ts === b.ts);
        if (!m) return json(res, 200, { ok: false, error: 'message_not_found' });
        m.text = String(b.text ?? '');
        m.blocks = (b.blocks as SlackStoredMessage['blocks']) ?? [];
        if (b.metadata) m.metadata = b.metadata as SlackStoredMessage['metadata'];
        return json(res, 200, { ok: true, channel: m.channel, ts: m.ts, text: m.text });
      }
      case '/api/conversations.history': {
        const channel = String(b.channel);
        const oldest = Number(b.oldest ?? 0);
        const list = this.messages
          .filter((m) => m.channel === channel && !m.thread_ts && Number(m.ts) >= oldest)
          .reverse()
          .map((m) => this.view(m, b.include_all_metadata === 'true'));
        return json(res, 200, { ok: true, messages: list, has_more: false });
      }
      case '/api/conversations.replies': {
        const list = this.messages
          .filter((m) => m.ts === b.ts || m.thread_ts === b.ts)
          .map((m) => this.view(m, b.include_all_metadata === 'true'));
        return json(res, 200, { ok: true, messages: list, has_more: false });
      }
      default:
        return json(res, 200, { ok: false, error: 'unknown_method' });
    }
  }

  private view(m: SlackStoredMessage, metadata: boolean): Record<string, unknown> {
    return {
      type: 'message',
      ts: m.ts,
      text: m.text,
      ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
      ...(metadata && m.metadata ? { metadata: m.metadata } : {}),
    };
  }
}

function blockProblem(blocks: unknown): string | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks)) return 'invalid_blocks_format';
  if (blocks.length > LIMIT.blocks) return 'invalid_blocks';
  let chars = 0;
  for (const block of blocks as SlackStoredMessage['blocks']) {
    const text = block.text?.text ?? '';
    chars += text.length;
    if (block.type === 'header' && text.length > LIMIT.header) return 'invalid_blocks';
    if (block.type === 'section' && text.length > LIMIT.section) return 'invalid_blocks';
    if (block.type === 'section' && !block.text && !block.fields) return 'invalid_blocks';
    if (block.type === 'section' && block.text && text.length === 0) return 'invalid_blocks';
    for (const f of block.fields ?? []) {
      chars += f.text.length;
      if (f.text.length > LIMIT.field) return 'invalid_blocks';
    }
    if ((block.fields?.length ?? 0) > LIMIT.fields) return 'invalid_blocks';
  }
  return chars > LIMIT.blockChars ? 'msg_blocks_too_long' : undefined;
}

/** Verifies `X-Triage-Runner-Signature` as the README tells a receiver to, independently of the sender. */
export function verifyWebhook(secret: string, r: Recorded, maxAgeSeconds = 300): boolean {
  const ts = r.headers['x-triage-runner-timestamp'] ?? '';
  const sig = r.headers['x-triage-runner-signature'] ?? '';
  if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > maxAgeSeconds) return false;
  const expected = Buffer.from(`v1=${createHmac('sha256', secret).update(`${ts}.${r.raw}`).digest('hex')}`);
  const given = Buffer.from(sig);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A webhook receiver: answers 204, or what `on()` says. */
export class WebhookReceiver extends StandIn {
  readonly accepted: Recorded[] = [];
  protected apply(r: Recorded): void {
    this.accepted.push(r);
  }
  protected handle(r: Recorded, res: ServerResponse): void {
    this.accepted.push(r);
    res.writeHead(204);
    res.end();
  }
}

/** PagerDuty: Events API v2 at /v2/enqueue, REST notes at /incidents/{id}/notes. */
export class PagerDutyApi extends StandIn {
  readonly events: Record<string, unknown>[] = [];
  readonly notes = new Map<string, { id: string; content: string }[]>();

  constructor(
    readonly routingKey: string,
    readonly apiToken = '',
  ) {
    super();
  }

  protected apply(r: Recorded): void {
    if (r.path === '/v2/enqueue') this.events.push(r.body);
    const note = /^\/incidents\/([^/]+)\/notes$/.exec(r.path);
    if (note?.[1] && r.method === 'POST') this.addNote(note[1], r);
  }

  private addNote(incident: string, r: Recorded): { id: string; content: string } {
    const list = this.notes.get(incident) ?? [];
    const created = {
      id: `NOTE${list.length + 1}`,
      content: String((r.body.note as { content?: unknown })?.content),
    };
    list.push(created);
    this.notes.set(incident, list);
    return created;
  }

  protected handle(r: Recorded, res: ServerResponse): void {
    if (r.path === '/v2/enqueue') {
      const b = r.body;
      const payload = b.payload as { summary?: string; source?: string; severity?: string } | undefined;
      if (b.routing_key !== this.routingKey)
        return json(res, 400, {
          status: 'invalid event',
          message: 'Event object is invalid',
          errors: ['invalid routing_key'],
        });
      if (!payload?.summary || payload.summary.length > 1024 || !payload.source || !payload.severity)
        return json(res, 400, {
          status: 'invalid event',
          message: 'Event object is invalid',
          errors: ['payload'],
        });
      this.events.push(b);
      return json(res, 202, { status: 'success', message: 'Event processed', dedup_key: b.dedup_key });
    }
    const note = /^\/incidents\/([^/]+)\/notes$/.exec(r.path);
    if (note?.[1]) {
      if (r.headers.authorization !== `Token token=${this.apiToken}`)
        return json(res, 401, { error: { message: 'Unauthorized', code: 2006 } });
      if (!r.headers.from)
        return json(res, 400, {
          error: { message: 'Invalid Input Provided', code: 2001, errors: ['From header required'] },
        });
      if (r.method === 'GET') return json(res, 200, { notes: this.notes.get(note[1]) ?? [] });
      return json(res, 201, { note: this.addNote(note[1], r) });
    }
    json(res, 404, { error: { message: 'Not Found' } });
  }
}
