// What each allowed cluster call returned, recorded beside cluster-calls.jsonl: the broker runs a
// stand-in kubectl on the daemon's side, the guard's real `kubectl` client calls it, and every allowed
// call's stdout and stderr land in cluster-outputs.jsonl, redacted and bounded, with the cut recorded.
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBroker, type RunningBroker } from '../../../src/kubectl/broker/broker.js';
import { CallLog, readCallLog } from '../../../src/kubectl/broker/calls.js';
import { OutputLog, readOutputLog } from '../../../src/kubectl/broker/outputs.js';
import { installGuard } from '../../../src/kubectl/broker/install-guard.js';
import { DEFAULT_HELPERS, compilePolicy } from '../../../src/kubectl/policy/policy.js';
import { tempDir } from '../../support/runs.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';

const policy = compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in');

const FAKE_KUBECTL = `#!/bin/sh
case "$1" in
  get) echo "NAME    READY   STATUS"; echo "web-1   0/1     CrashLoopBackOff"; echo "token=s3cr3t-value-123"; exit 0 ;;
  describe) echo 'Error from server (Forbidden): pods "web-1" is forbidden' >&2; exit 1 ;;
  top) seq 1 100000; exit 0 ;;
esac
exit 0
`;

describe('broker records what each allowed call returned', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let broker: RunningBroker | undefined;
  let calls: CallLog;
  let outputs: OutputLog;
  let kubectl: string;

  const start = async (perRun?: number) => {
    calls = await CallLog.open(path.join(root.dir, RUN_FILES.clusterCalls));
    const redact = (t: string) => t.replaceAll('s3cr3t-value-123', '[REDACTED]');
    outputs = await OutputLog.open(path.join(root.dir, RUN_FILES.clusterOutputs), redact, perRun);
    const fakeDir = path.join(root.dir, 'daemon-side');
    await mkdir(fakeDir);
    await writeFile(path.join(fakeDir, 'kubectl'), FAKE_KUBECTL, { mode: 0o755 });
    broker = await startBroker({
      socketPath: path.join(root.dir, 'kubectl.sock'),
      policy,
      kubectl: { command: path.join(fakeDir, 'kubectl'), env: { PATH: '/usr/bin:/bin' }, cwd: root.dir },
      callTimeoutMs: 20_000,
      killGraceMs: 500,
      captureBytes: 1000,
      onCall: async (record, output) => {
        const n = await calls.append(record);
        if (output && record.decision === 'allowed') await outputs.append(n, record, output);
      },
    });
    kubectl = (
      await installGuard(path.join(root.dir, 'guard'), {
        socketPath: broker.socketPath,
        nodePath: process.execPath,
        runId: 'run-1',
      })
    ).kubectl;
  };
  const run = (args: string[]): Promise<void> =>
    new Promise((resolve) =>
      execFile(kubectl, args, { env: { PATH: '/usr/bin:/bin' }, maxBuffer: 64 * 1024 * 1024 }, () =>
        resolve(),
      ),
    );

  beforeEach(async () => {
    root = await tempDir('triage-outputs-');
  });
  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
    await calls?.close();
    await outputs?.close();
    await root.cleanup();
  });

  it('keeps stdout and stderr of allowed calls, redacted, numbered like their call records; a refusal has none', async () => {
    await start();
    await run(['get', 'pods', '-n', 'shop']);
    await run(['delete', 'pod', 'web-1']);
    await run(['describe', 'po', 'web-1', '-n', 'shop']);
    await broker?.stop();
    const records = (await readCallLog(calls.file)).records;
    expect(records.map((r) => [r.call, r.decision])).toEqual([
      [1, 'allowed'],
      [2, 'refused'],
      [3, 'allowed'],
    ]);
    const out = await readOutputLog(outputs.file);
    expect(out.map((o) => o.call)).toEqual([1, 3]);
    expect(out[0]).toMatchObject({
      by: 'guard',
      normalized: 'get pods --namespace=shop',
      exitCode: 0,
      stdout: 'NAME    READY   STATUS\nweb-1   0/1     CrashLoopBackOff\ntoken=[REDACTED]\n',
      stderr: '',
    });
    expect(out[0]?.cut).toBeUndefined();
    expect(out[1]).toMatchObject({ exitCode: 1, stderr: expect.stringContaining('(Forbidden)') });
  });

  it('cuts a call past its bound and the run past its bound, recording how much was dropped', async () => {
    await start(1500);
    await run(['top', 'pod']);
    await run(['top', 'pod']);
    await broker?.stop();
    const [first, second] = await readOutputLog(outputs.file);
    const total = Buffer.byteLength(`${Array.from({ length: 100_000 }, (_, i) => i + 1).join('\n')}\n`);
    expect(first?.stdout.length).toBe(1000);
    expect(first?.cut).toEqual({ stdoutBytes: total - 1000, stderrBytes: 0, by: 'call' });
    expect(second?.stdout.length).toBe(500);
    expect(second?.cut).toEqual({ stdoutBytes: total - 500, stderrBytes: 0, by: 'run' });
  });
});
