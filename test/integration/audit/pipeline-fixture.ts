import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { AuditLog } from '../../../src/audit/log.js';
import { loadConfig, type Config } from '../../../src/config/index.js';
import { resolveSecrets } from '../../../src/config/secrets.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import type { RunExecutor } from '../../../src/run/types.js';
import { createLogger, type Logger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';

// The real run pipeline (createRunExecutor + the process engine) set up in a temp folder: a local
// skills source with a triage script, a fake agent CLI, and a logger whose lines are captured.

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const LEAKY_AGENT = path.join(REPO_ROOT, 'test/fixtures/audit/leaky-agent.sh');

export interface Pipeline {
  root: string;
  config: Config;
  executor: RunExecutor;
  audit: AuditLog;
  log: Logger;
  logLines: string[];
}

export const INCIDENT_TEXT = (context: unknown = { reason: 'CrashLoopBackOff' }) =>
  `${JSON.stringify(
    {
      incidentId: 'inc-secret-1',
      cluster: 'prod-eu',
      namespace: 'payments',
      resource: { kind: 'Pod', name: 'payments-api-1', namespace: 'payments' },
      faultType: 'CrashLoop',
      severity: 'critical',
      context,
      timestamp: '2026-11-22T02:00:00Z',
    },
    null,
    2,
  )}\n`;

/** Builds config, secrets, redactor, logger, audit log and executor exactly as the daemon command does. */
export async function makePipeline(env: Record<string, string>, triageScript: string): Promise<Pipeline> {
  const root = await mkdtemp(path.join(tmpdir(), 'tr-audit-pipe-'));
  const skills = path.join(root, 'skills');
  await mkdir(skills, { recursive: true });
  await writeFile(path.join(skills, 'triage.sh'), triageScript);
  await chmod(path.join(skills, 'triage.sh'), 0o755);
  await mkdir(path.join(root, 'incidents'), { recursive: true });
  const configFile = path.join(root, 'config.yaml');
  await writeFile(
    configFile,
    [
      `workspaces_root: ${path.join(root, 'incidents')}`,
      'engine: process',
      'agent:',
      '  name: claude',
      `  command: ${LEAKY_AGENT}`,
      '  timeout: 30s',
      '  min_report_bytes: 10',
      'skills:',
      '  sources:',
      `    - { name: k8s4agents, path: ${skills} }`,
      '  triage: { skill: k8s4agents, script: triage.sh, args: [], timeout: 10s }',
      'http: { port: 0 }',
      // The leaky stand-in agent prints the key it was handed. Without the model gateway that is the
      // real key, so the scans check the real key is scrubbed from everything the run writes.
      'gateway: { enabled: false }',
      'log: { level: debug }',
      '',
    ].join('\n'),
  );
  const { config } = loadConfig({ file: configFile, env, cwd: root, packageRoot: REPO_ROOT });
  const secrets = resolveSecrets(config, env);
  const redactor = new Redactor(secrets.values);
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logLines.push(chunk.toString('utf8'));
      cb();
    },
  });
  const log = createLogger({ level: 'debug', redactor, destination });
  const audit = new AuditLog({ redactor });
  const executor = createRunExecutor({
    config,
    log,
    redactor,
    secrets: secrets.values,
    audit,
    env: { ...process.env, ...env },
  });
  return { root, config, executor, audit, log, logLines };
}
