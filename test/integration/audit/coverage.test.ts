// What `audit verify` covers beyond the run bundles: state.json edited afterwards, and — with a keyed chain —
// a forged line whose hashes and audit.head were recomputed by someone without the key.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { verifyWorkspaceAudit } from '../../../src/replay/verify.js';
import { IncidentStore } from '../../../src/incident/store.js';
import { statePath } from '../../../src/workspace/layout.js';
import { silentLogger } from '../../../src/log/logger.js';
import { forgeLine } from '../../support/audit-forge.js';
import { tempRoot } from '../../support/incidents.js';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ root, cleanup } = await tempRoot()));
afterEach(async () => cleanup());

const policy = { max_attempts: 3, retry_base_delay: 1000, retry_max_delay: 60_000 };

async function finishedWorkspace(key?: string): Promise<string> {
  const dir = path.join(root, 'ws');
  await mkdir(dir);
  const store = new IncidentStore({ audit: new AuditLog(key ? { key } : {}), log: silentLogger(), policy });
  await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: 'abc' });
  await store.apply(dir, { type: 'Claimed', runId: 'r1', holder: 'd:1' });
  await store.apply(dir, { type: 'Finished', runId: 'r1', outcome: { status: 'failed', exitCode: 2 } });
  return dir;
}

describe('audit verify coverage', () => {
  it('detects state.json edited after the fact (a failed incident made to look succeeded)', async () => {
    const dir = await finishedWorkspace();
    expect(await verifyWorkspaceAudit(dir)).toMatchObject({ ok: true });
    const state = JSON.parse(await readFile(statePath(dir), 'utf8')) as Record<string, unknown>;
    await writeFile(statePath(dir), JSON.stringify({ ...state, state: 'succeeded', reason: undefined }));
    expect(await verifyWorkspaceAudit(dir)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/state\.json was changed after this line recorded it/),
    });
  });

  it('an unkeyed chain cannot tell a forged line with recomputed hashes; a keyed chain can', async () => {
    const plain = await finishedWorkspace();
    await forgeLine(plain, { type: 'note', incidentId: 'inc-1', text: 'forged' });
    expect(await verifyWorkspaceAudit(plain)).toMatchObject({ ok: true });

    await cleanup();
    ({ root, cleanup } = await tempRoot());
    const keyed = await finishedWorkspace('audit-key-0123456789');
    expect(await verifyWorkspaceAudit(keyed, { key: 'audit-key-0123456789' })).toMatchObject({
      ok: true,
      keyed: { from: 1, checked: true },
    });
    await forgeLine(keyed, { type: 'note', incidentId: 'inc-1', text: 'forged' });
    expect(await verifyWorkspaceAudit(keyed, { key: 'audit-key-0123456789' })).toMatchObject({
      ok: false,
      line: 5,
      problem: expect.stringMatching(/carries no HMAC though the log is keyed from line 1/),
    });
    expect(await verifyWorkspaceAudit(keyed, { key: 'another-key' })).toMatchObject({
      ok: false,
      line: 1,
      problem: expect.stringMatching(/HMAC does not match/),
    });
  });
});
