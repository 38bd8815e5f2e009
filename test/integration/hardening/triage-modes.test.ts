// Who can read what the daemon keeps under `.triage/`: the real daemon (process engine, a stand-in
// agent) runs an incident dropped in a folder and one sent over HTTP, takes feedback and notifies a
// webhook; every file under the workspaces' and the root's `.triage/` is then its user's only (0600),
// every folder too (0700), `.triage/` and `runs/` only searchable (0711). What the producer and the agent
// read (the incident folder, incident.json, the report) keeps its ordinary modes.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliDaemon } from '../../support/cli-daemon.js';
import { dropIncident, until, waitForFinalRun } from '../../support/cli-daemon.js';
import { TEST_IMAGE, dockerHost, requireEngine, requireTestImage } from '../../support/engine.js';
import { incidentJson } from '../../support/incidents.js';
import { WebhookReceiver } from '../../support/notify-servers.js';
import { makeWorkspace, tempDir, testConfig } from '../../support/runs.js';
import { runShAgent } from '../../support/sh-agent.js';
import { httpPort, startProcessDaemon } from './support.js';

let root: { dir: string; cleanup: () => Promise<void> };
let daemon: CliDaemon | undefined;
let hook: WebhookReceiver;

beforeAll(async () => {
  root = await tempDir('triage-modes-');
  hook = await new WebhookReceiver().start();
});
afterAll(async () => {
  await daemon?.stop();
  await hook.close();
  await root.cleanup();
});

/** Every entry below `dir` (itself included) with its mode, relative to `base`. */
async function modesBelow(dir: string, base: string): Promise<{ rel: string; dir: boolean; mode: number }[]> {
  const out = [{ rel: path.relative(base, dir), dir: true, mode: (await stat(dir)).mode & 0o777 }];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const p = path.join(e.parentPath, e.name);
    const info = await stat(p);
    out.push({ rel: path.relative(base, p), dir: info.isDirectory(), mode: info.mode & 0o777 });
  }
  return out;
}

const octal = (mode: number) => mode.toString(8).padStart(4, '0');
/** Why an entry's mode is wrong: `.triage/` and `.triage/runs/` searchable, other folders 0700, files the user's only. */
function wrongMode(rel: string, dir: boolean, mode: number): string | undefined {
  const passage = /(^|\/)\.triage$/.test(rel) || /(^|\/)\.triage\/runs$/.test(rel);
  if (dir) {
    const want = passage ? 0o711 : 0o700;
    return mode === want ? undefined : `${rel} ${octal(mode)} (expected ${octal(want)})`;
  }
  // 0600, or 0700 for an executable (the guard's kubectl).
  return mode === 0o600 || mode === 0o700 ? undefined : `${rel} ${octal(mode)} (expected 0600)`;
}

describe('modes under .triage/', () => {
  it(
    'keeps everything the daemon records to its own user, and what the producer and agent read as it was',
    { timeout: 180_000 },
    async () => {
      const incidents = path.join(root.dir, 'incidents');
      daemon = await startProcessDaemon(
        path.join(root.dir, 'daemon'),
        incidents,
        {
          notify: {
            sinks: [{ name: 'hook', type: 'webhook', url: `${hook.url}/triage`, secret: 'HOOK_SECRET' }],
          },
          secrets: { HOOK_SECRET: { env: 'HOOK_SECRET' } },
        },
        { HOOK_SECRET: 'hook-signing-secret-0123456789' },
      );
      const base = `http://127.0.0.1:${httpPort(daemon)}`;
      const dropped = path.join(incidents, 'dropped');
      await dropIncident(dropped, incidentJson({ incidentId: 'modes-dropped' }));
      const posted = await fetch(`${base}/v1/incidents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(incidentJson({ incidentId: 'modes-posted' })),
      });
      expect(posted.status).toBe(202);
      const workspace = path.join(incidents, ((await posted.json()) as { workspace: string }).workspace);
      const detail = () => daemon?.tail() ?? '';
      for (const ws of [dropped, workspace])
        expect((await waitForFinalRun(ws, 60_000, detail)).state.state).toBe('succeeded');
      const feedback = await fetch(`${base}/v1/incidents/dropped/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ verdict: 'correct', by: 'responder' }),
      });
      expect(feedback.status).toBe(201);
      await until(
        'both notifications delivered',
        30_000,
        async () => (hook.accepted.length >= 2 ? true : undefined),
        detail,
      );
      await daemon.stop();

      const entries = [
        ...(await modesBelow(path.join(incidents, '.triage'), incidents)),
        ...(await modesBelow(path.join(dropped, '.triage'), incidents)),
        ...(await modesBelow(path.join(workspace, '.triage'), incidents)),
      ];
      const rels = entries.map((e) => e.rel);
      // Each kind of record is there to be checked.
      for (const name of [
        'state.json',
        'audit.jsonl',
        'feedback.json',
        'result.json',
        'prompt-sent.md',
        'agent-stdout.log',
      ])
        expect(
          rels.some((r) => r.endsWith(`/${name}`)),
          name,
        ).toBe(true);
      expect(rels.some((r) => r.startsWith('dropped/.triage/outbox/'))).toBe(true);
      expect(rels.some((r) => r.startsWith('.triage/dedup/'))).toBe(true);
      expect(rels.some((r) => r.startsWith('.triage/intake/'))).toBe(true);
      const wrong = entries.map((e) => wrongMode(e.rel, e.dir, e.mode)).filter((w) => w !== undefined);
      expect(wrong).toEqual([]);

      // What the producer wrote, what HTTP intake made for it, and the agent's report: as before.
      for (const ws of [dropped, workspace]) {
        expect((await stat(ws)).mode & 0o777).toBe(0o755);
        expect((await stat(path.join(ws, 'incident.json'))).mode & 0o777).toBe(0o644);
        expect((await stat(path.join(ws, 'output', 'investigation.md'))).mode & 0o777).toBe(0o644);
      }
    },
  );
});

const docker = await requireEngine();

describe.skipIf(!docker)('what a container agent reads of its run folder', () => {
  it("is shared with the container user's group (0750/0640) and nothing else is", async () => {
    await requireTestImage(docker!);
    const config = testConfig(root.dir, {
      agent: { image: TEST_IMAGE },
      docker: { host: dockerHost(), network: 'none', user: '1000:1000' },
    });
    const workspace = await makeWorkspace(root.dir);
    const runId = `modes-docker-${process.pid}`;
    const { outcome, bundle, stdout } = await runShAgent(config, workspace, runId, [
      'try() { if (eval "$1") >/dev/null 2>&1; then echo "$2=ok"; else echo "$2=denied"; fi; }',
      'try "ls $TRIAGE_RUN_DIR" run_list',
      'try "ls $TRIAGE_RUN_DIR/triage" triage_list',
      'try "cat /workspace/incident.json" incident_read',
      'try "cat $TRIAGE_RUN_DIR/prompt-sent.md" prompt_read',
      'try "cat $TRIAGE_RUN_DIR/context.json" context_read',
      'try "ls /workspace/.triage" triage_root_list',
      'try "ls /workspace/.triage/runs" runs_list',
    ]);
    expect(outcome, stdout).toMatchObject({ status: 'succeeded', exitCode: 0 });
    for (const line of ['run_list=ok', 'triage_list=ok', 'incident_read=ok']) expect(stdout).toContain(line);
    for (const line of [
      'prompt_read=denied',
      'context_read=denied',
      'triage_root_list=denied',
      'runs_list=denied',
    ])
      expect(stdout).toContain(line);
    const of = async (p: string) => {
      const s = await stat(p);
      return { mode: octal(s.mode & 0o777), gid: s.gid };
    };
    expect(await of(bundle)).toEqual({ mode: '0750', gid: 1000 });
    expect(await of(path.join(bundle, 'triage'))).toEqual({ mode: '0750', gid: 1000 });
    expect((await of(path.join(bundle, 'prompt-sent.md'))).mode).toBe('0600');
    expect((await of(path.join(bundle, 'context.json'))).mode).toBe('0600');
    expect((await of(path.join(workspace.dir, '.triage'))).mode).toBe('0711');
  });
});
