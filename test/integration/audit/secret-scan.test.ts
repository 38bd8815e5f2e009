import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditLog } from '../../../src/audit/log.js';
import { listFiles, scanForSecrets } from '../../support/secret-scan.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import { INCIDENT_TEXT, makePipeline, type Pipeline } from './pipeline-fixture.js';
import { eventually } from '../../support/wait.js';

// Plants secrets in the daemon's environment, in the incident and (through the fake agent) in the
// agent's stdout, stderr and report; runs the daemon with the real run pipeline (process engine) and
// scans what it recorded.

const ENV_SECRETS = {
  ANTHROPIC_API_KEY: 'anthropic-env-value-7f3a9c2e51d4',
  CODEX_API_KEY: 'codex-env-value-0b8e6d4c2a19',
  GEMINI_API_KEY: 'gemini-env-value-5e1f9a7c3b2d',
};
const INCIDENT_TOKEN = 'sk-ant-api03-IncidentPlanted0123456789abcdefXYZ';
const TRIAGE_TOKEN = 'ghp_TriagePlanted0123456789abcdefghijKLMN';
const PLANTED = { ...ENV_SECRETS, INCIDENT_TOKEN, TRIAGE_TOKEN };

const TRIAGE_SCRIPT = `#!/bin/sh
echo "pods in payments: 3 CrashLoopBackOff"
echo "found in a ConfigMap: GITHUB_TOKEN=${TRIAGE_TOKEN}"
echo "env leak: $ANTHROPIC_API_KEY" >&2
`;

/** The agent's input files (the raw prompt it is handed); everything else under .triage/ is an audit record. */
const AGENT_INPUTS = `${path.sep}agent-files${path.sep}`;

let pipeline: Pipeline;
let ws: string;
let triageDir: string;

async function waitForState(
  dir: string,
  states: string[],
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  let state: Record<string, unknown> | undefined;
  return eventually(
    `state.json in ${dir} to reach ${states.join('|')}`,
    async () => {
      state = await readFile(path.join(dir, '.triage', 'state.json'), 'utf8').then(
        (t) => JSON.parse(t) as Record<string, unknown>,
        () => undefined,
      );
      return state && states.includes(String(state.state)) ? state : undefined;
    },
    timeoutMs,
    50,
    () => `last seen: ${JSON.stringify(state)}`,
  );
}

beforeAll(async () => {
  pipeline = await makePipeline(ENV_SECRETS, TRIAGE_SCRIPT);
  ws = path.join(pipeline.config.workspaces_root, 'inc-secret-1');
  triageDir = path.join(ws, '.triage');
  await mkdir(ws, { recursive: true });
  await writeFile(
    path.join(ws, 'incident.json'),
    INCIDENT_TEXT({ reason: 'CrashLoopBackOff', note: `key ${INCIDENT_TOKEN}` }),
  );
  const daemon = new Daemon({
    config: pipeline.config,
    log: pipeline.log,
    executor: pipeline.executor,
    audit: pipeline.audit,
    http: false,
  });
  await daemon.start();
  try {
    const state = await waitForState(ws, ['succeeded', 'failed'], 45_000);
    expect(state.state, JSON.stringify(state)).toBe('succeeded');
  } finally {
    await daemon.stop();
  }
});

afterAll(async () => {
  if (pipeline) await rm(pipeline.root, { recursive: true, force: true });
});

describe('secret scrubbing through the daemon and the real run pipeline', () => {
  it('records the leaky agent output (so the scans below are not vacuous)', async () => {
    const [runId] = await readdir(path.join(triageDir, 'runs'));
    const runDir = path.join(triageDir, 'runs', String(runId));
    const stdout = await readFile(path.join(runDir, 'agent-stdout.log'), 'utf8');
    expect(stdout).toContain('env key [REDACTED:ANTHROPIC_API_KEY]');
    expect(stdout).toContain('incident token [REDACTED]');
    // The base64 lines were printed (so the base64 forms the scans look for had a chance to leak).
    expect(stdout).toContain('data: ANTHROPIC_API_KEY: [REDACTED:ANTHROPIC_API_KEY]');
    expect(await readFile(path.join(runDir, 'agent-stderr.log'), 'utf8')).toContain(
      '[REDACTED:ANTHROPIC_API_KEY]',
    );
    expect(await readFile(path.join(runDir, 'triage', 'output.log'), 'utf8')).toContain(
      'GITHUB_TOKEN=[REDACTED]',
    );
    const relative = (await listFiles(triageDir)).map((f) => path.relative(triageDir, f));
    for (const name of [
      'prompt-sent.md',
      'context.json',
      'result.json',
      'invocation.json',
      'agent-stderr.log',
    ]) {
      expect(relative).toContain(path.join('runs', String(runId), name));
    }
    expect(relative).toContain('state.json');
    expect(relative).toContain('audit.jsonl');
  });

  it('leaves no planted secret in any audit record under .triage/ (state, audit log, bundle, logs)', async () => {
    const findings = await scanForSecrets(triageDir, PLANTED);
    expect(findings.filter((f) => !`${path.sep}${f.file}`.includes(AGENT_INPUTS))).toEqual([]);
    expect(await verifyAuditLog(triageDir)).toMatchObject({ ok: true });
  });

  it('leaves no planted secret in any line the daemon logged', () => {
    expect(pipeline.logLines.length).toBeGreaterThan(5);
    const text = pipeline.logLines.join('');
    const leaked = Object.entries(PLANTED).filter(([, value]) => text.includes(value));
    expect(leaked.map(([name]) => name)).toEqual([]);
  });

  // Decision: the report is the agent's file, but it is an artifact of the run that people share, so the
  // daemon scrubs it in place after the run (src/audit/bundle.ts scrubFile, called by the run pipeline).
  it("scrubs the planted secrets from the agent's report after the run", async () => {
    const report = await readFile(path.join(ws, 'output', 'investigation.md'), 'utf8');
    expect(report).toContain('## 3. Root Cause Analysis');
    expect(await scanForSecrets(path.join(ws, 'output'), PLANTED)).toEqual([]);
  });

  // The agent's input files hold the prompt exactly as sent: the prompt itself must be scrubbed
  // (prepare renders the incident through RunBundle.redact) so no credential reaches the model or disk.
  it('leaves no planted secret in the agent input files kept under .triage/ either', async () => {
    const findings = await scanForSecrets(triageDir, PLANTED);
    expect(findings.filter((f) => `${path.sep}${f.file}`.includes(AGENT_INPUTS))).toEqual([]);
  });
});
