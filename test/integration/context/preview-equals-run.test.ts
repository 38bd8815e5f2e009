// `triage-runner context` builds the context with the run's own preparation in a dry run: for the same
// incident and the same cluster state, the prompt it prints is the prompt a real run sends. The real
// run here is the pipeline with the process engine, the claude adapter and a stand-in agent CLI
// (agent.command), its cluster a stand-in kubectl answering from a saved cluster; the cases are the
// ones where a preview built by hand drifted from a run: permissions the daemon probed because the
// producer wrote none, and a cluster the daemon cannot reach.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { AuditLog } from '../../../src/audit/log.js';
import { runCli } from '../../../src/cli/program.js';
import { loadConfig } from '../../../src/config/index.js';
import { promptDigest } from '../../../src/context/build.js';
import { renderPromptSent } from '../../../src/context/prompt.js';
import type { ContextReport, PromptParts } from '../../../src/context/types.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { readWorkspace } from '../../../src/workspace/incident.js';
import { runDirOf, RUN_FILES } from '../../../src/workspace/layout.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

const FAKE = path.join(REPO_ROOT, 'test/fixtures/fake-kubectl');
const KUBECTL = path.join(FAKE, 'kubectl');
const AGENT = path.join(REPO_ROOT, 'test/fixtures/agents/claude-like-agent.sh');
/** The run's id in the real run; `context` names the same folders `<run-id>`. */
const RUN_ID = '20261128T090000Z-c0ffee';
/** Both sides build at the same instant: probed permissions carry the time they were checked. */
const NOW = new Date('2026-11-28T09:00:00.000Z');

const kubeconfig = (server: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'prod', cluster: { server } }],
    contexts: [{ name: 'prod', context: { cluster: 'prod', user: 'investigator' } }],
    users: [{ name: 'investigator', user: { token: 'never-in-a-prompt' } }],
    'current-context': 'prod',
  });

interface Case {
  name: string;
  /** The cluster's API server, as the kubeconfig says (file:// is a saved cluster, 127.0.0.1:9 is down). */
  server: string;
  /** The producer's incident_cluster_permissions.json; absent: the daemon probes them when it can. */
  permissions?: string;
  /** What the prompt must say, so that the case is what it claims. */
  says: RegExp;
}

const CASES: Case[] = [
  {
    name: 'the permissions the daemon probed (the producer wrote none)',
    server: `file://${path.join(FAKE, 'clusters', 'crashloop-payments-api')}`,
    says: /"source": "probed by triage-runner/,
  },
  {
    name: 'a cluster the daemon cannot reach',
    server: 'https://127.0.0.1:9',
    says: /CLUSTER UNREACHABLE: the daemon could not reach cluster/,
  },
  {
    name: "the producer's own permissions file",
    server: `file://${path.join(FAKE, 'clusters', 'crashloop-payments-api')}`,
    permissions: '{"can_get_pods": true, "can_get_logs": false}\n',
    says: /"can_get_logs": false/,
  },
];

let t: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  t = await tempDir('tr-preview-');
  await chmod(t.dir, 0o755);
  // The triage skill: lists the pods with the stand-in kubectl (through the run's KUBECONFIG).
  const skill = path.join(t.dir, 'skill');
  await mkdir(skill, { recursive: true });
  await writeFile(
    path.join(skill, 'triage.sh'),
    ['#!/bin/sh', 'echo "== pods"', `${KUBECTL} get pods -A 2>&1 | head -n 40`, 'exit 0', ''].join('\n'),
  );
  await chmod(path.join(skill, 'triage.sh'), 0o755);
});

afterAll(async () => t.cleanup());

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => vi.useRealTimers());

/** A root with one incident and a config file for it, for one cluster state. */
async function setup(c: Case, index: number) {
  const base = path.join(t.dir, `case-${index}`);
  const root = path.join(base, 'incidents');
  const ws = path.join(root, 'payments-crash');
  await mkdir(ws, { recursive: true });
  await writeFile(
    path.join(ws, 'incident.json'),
    JSON.stringify({
      incidentId: `inc-preview-${index}`,
      cluster: 'prod',
      namespace: 'payments',
      resource: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: 'payments-api-7c9d8f6b5d-x2k9q',
        namespace: 'payments',
      },
      faultType: 'CrashLoop',
      severity: 'high',
      timestamp: '2026-11-28T08:55:00Z',
    }),
  );
  if (c.permissions) await writeFile(path.join(ws, 'incident_cluster_permissions.json'), c.permissions);
  const kube = path.join(base, 'kubeconfig');
  await writeFile(kube, kubeconfig(c.server));
  const configFile = path.join(base, 'triage-runner.yaml');
  await writeFile(
    configFile,
    stringify({
      workspaces_root: root,
      engine: 'process',
      kubeconfig: kube,
      agent: { name: 'claude', command: AGENT, min_report_bytes: 10, report_sections: ['Summary'] },
      kubectl: { command: KUBECTL, access_check: true },
      system_prompt_file: path.join(REPO_ROOT, 'configs/triage-system-prompt.md'),
      user_prompt_file: path.join(REPO_ROOT, 'configs/user-prompt.md'),
      personas_dir: path.join(REPO_ROOT, 'configs/personas'),
      briefs_dir: path.join(REPO_ROOT, 'configs/briefs'),
      boot_file: path.join(REPO_ROOT, 'configs/boot.yml'),
      skills: {
        cache_dir: path.join(base, 'skills-cache'),
        sources: [{ name: 'preview-skill', path: path.join(t.dir, 'skill') }],
        disable_triage_preload: false,
        triage: {
          skill: 'preview-skill',
          script: 'triage.sh',
          args: ['--output-dir', '{triage_dir}'],
          validate_report: false,
        },
      },
      log: { level: 'error' },
    }),
  );
  return { ws, configFile, env: { PATH: process.env.PATH, HOME: base } };
}

/** What `triage-runner context --json` prints: the prompt parts and the context report. */
async function contextCommand(ws: string, configFile: string, env: Record<string, string | undefined>) {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    stdout: (s: string) => void out.push(s),
    stderr: (s: string) => void err.push(s),
    env,
    cwd: ws,
  };
  const code = await runCli(['--config', configFile, 'context', ws, '--json'], io);
  expect(code, err.join('')).toBe(0);
  return JSON.parse(out.join('')) as { prompt: PromptParts; context: ContextReport };
}

/** A real run of the incident: the pipeline, the process engine, the stand-in agent. */
async function realRun(ws: string, configFile: string, env: Record<string, string | undefined>) {
  const { config } = loadConfig({ file: configFile, env, cwd: ws });
  const log = silentLogger();
  const executor = createRunExecutor({
    config,
    log,
    redactor: new Redactor(),
    secrets: {},
    audit: new AuditLog(),
    env,
    engine: createProcessEngine(config, log),
  });
  try {
    const read = await readWorkspace(ws, { maxBytes: config.intake.max_incident_bytes });
    if (read.kind !== 'ok') throw new Error(`incident did not read back: ${JSON.stringify(read)}`);
    const outcome = await executor.run({
      workspace: read.workspace,
      runId: RUN_ID,
      attempt: 1,
      signal: new AbortController().signal,
      log,
    });
    expect(outcome.status, outcome.reason).toBe('succeeded');
  } finally {
    await executor.close?.();
  }
  const bundle = runDirOf(ws, RUN_ID);
  return {
    prompt: JSON.parse(await readFile(path.join(bundle, RUN_FILES.promptParts), 'utf8')) as PromptParts,
    promptSent: await readFile(path.join(bundle, RUN_FILES.promptSent), 'utf8'),
    context: JSON.parse(await readFile(path.join(bundle, RUN_FILES.context), 'utf8')) as ContextReport,
  };
}

describe("context's prompt is the prompt a real run sends", () => {
  it.each(CASES.map((c, i) => [c.name, c, i] as const))('with %s', async (_name, c, index) => {
    const { ws, configFile, env } = await setup(c, index);
    const preview = await contextCommand(ws, configFile, env);
    const run = await realRun(ws, configFile, env);

    // The run's folder is named by its id; the preview names the same folder `<run-id>`.
    const named = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('<run-id>', RUN_ID)) as T;
    const prompt = named(preview.prompt);
    expect(prompt.system + prompt.user).toMatch(c.says);
    expect(prompt).toEqual(run.prompt);
    // The report beside it says the same of the sections, the triage and the disclosure.
    const { sections: _previewSections, totalTokens: _pt, ...previewReport } = named(preview.context);
    const {
      sections: _runSections,
      totalTokens: _rt,
      promptSha256: _sha,
      ...runReport
    } = run.context as ContextReport & {
      promptSha256: string;
    };
    expect(previewReport).toEqual(runReport);
    expect(named(preview.context).sections.map((x) => x.tag)).toEqual(run.context.sections.map((x) => x.tag));
    // And prompt-sent.md, byte for byte: the run's, with the preview's prompt in it. (Its token table is
    // the run's: the run id and `<run-id>` are not the same number of tokens.)
    const { model } = loadConfig({ file: configFile, env, cwd: ws }).config.agent;
    const header = {
      agent: 'claude',
      model,
      placement: 'system' as const,
      promptSha256: promptDigest(prompt),
    };
    const sent = renderPromptSent(prompt, header, run.context);
    expect(sent).toBe(run.promptSent);
  });
});
