// The other places a run keeps what the agent saw: the agent's stream-json output (a tool result
// holding kubectl's output), model-calls.jsonl with gateway.record_bodies (the request body holding the
// same tool result, one JSON string inside another), and the report scrubbed in place. Each is written
// by the daemon's own writer with the daemon's redaction; none keeps a credential, each keeps the rest.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedactingLog, scrubFile } from '../../../src/workspace/bundle.js';
import { ModelCallLog } from '../../../src/gateway/calls.js';
import { Redactor } from '../../../src/log/redact.js';
import { clusterObjects, plantedForms, PLANTED, standInCluster } from '../../support/kube-objects.js';
import { tempDir } from '../../support/runs.js';

let root: { dir: string; cleanup: () => Promise<void> };
let seen: { secret: string; config: string; pods: string };

beforeEach(async () => {
  root = await tempDir('triage-redacted-records-');
  const cluster = await standInCluster(root.dir, clusterObjects());
  try {
    seen = {
      secret: await cluster.kubectl(['get', 'secret', 'payments-db', '-o', 'yaml']),
      config: await cluster.kubectl(['get', 'configmap', 'payments-config', '-o', 'json']),
      pods: await cluster.kubectl(['get', 'pods', '-o', 'yaml']),
    };
  } finally {
    await cluster.close();
  }
});
afterEach(async () => root.cleanup());

const leaks = (text: string) => plantedForms().filter((form) => text.includes(form));

/** A Claude Code stream-json line: the tool result the agent got back from a kubectl call. */
const toolResult = (content: string) =>
  `${JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content }] } })}\n`;

describe('records of what the agent saw', () => {
  it("keeps no credential in the agent's stream-json output, and the tool results still parse", async () => {
    const file = path.join(root.dir, 'agent-stdout.log');
    const log = new RedactingLog(file, new Redactor(), 64 << 20);
    for (const text of [seen.secret, seen.config, seen.pods]) log.write(Buffer.from(toolResult(text)));
    await log.close();
    const written = await readFile(file, 'utf8');
    expect(leaks(written)).toEqual([]);
    const contents = written
      .trim()
      .split('\n')
      .map(
        (line) =>
          (JSON.parse(line) as { message: { content: { content: string }[] } }).message.content[0]?.content,
      );
    expect(contents[0]).toContain('  password: [REDACTED]\n');
    expect(contents[1]).toContain('"stripe_key": "[REDACTED]"');
    expect(contents[2]).toContain('value: db.payments.svc.cluster.local');
  });

  it('keeps no credential in a recorded model request body (gateway.record_bodies)', async () => {
    const redactor = new Redactor();
    const log = await ModelCallLog.open(path.join(root.dir, 'model-calls.jsonl'), (t) => redactor.redact(t));
    const body = {
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: seen.secret }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_02', content: seen.pods }] },
      ],
    };
    await log.append({
      at: '2026-11-26T09:00:00.000Z',
      provider: 'anthropic',
      method: 'POST',
      path: '/v1/messages',
      status: 200,
      stream: true,
      latencyMs: 900,
      tokens: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
      retries: 0,
      request: JSON.stringify(body),
      response: `the database password is \`${PLANTED.dbPassword}\``,
    });
    await log.close();
    const line = await readFile(log.file, 'utf8');
    expect(leaks(line)).toEqual([]);
    const record = JSON.parse(line) as { request: string; response: string };
    const request = JSON.parse(record.request) as typeof body;
    expect(request.messages[0]?.content[0]?.content).toContain('  password: [REDACTED]\n');
    expect(request.messages[1]?.content[0]?.content).toContain('- name: DB_PASSWORD\n');
    expect(record.response).toBe('the database password is `[REDACTED]`');
  });

  it('scrubs a report quoting a password, an AWS key pair and a Secret excerpt, in place', async () => {
    const report = path.join(root.dir, 'investigation.md');
    const text = [
      '# Report',
      `The database password is \`${PLANTED.dbPassword}\`; the AWS secret key is ${PLANTED.awsSecret} for ${PLANTED.awsKeyId}.`,
      '```yaml',
      seen.secret.trim(),
      '```',
      'Restart the Deployment.',
    ].join('\n');
    await writeFile(report, text);
    expect(await scrubFile(report, new Redactor())).toBe(true);
    const clean = await readFile(report, 'utf8');
    expect(leaks(clean)).toEqual([]);
    expect(clean).toContain(
      'The database password is `[REDACTED]`; the AWS secret key is [REDACTED] for [REDACTED].',
    );
    expect(clean).toContain('  name: payments-db\n');
    expect(clean).toContain('Restart the Deployment.');
  });
});
