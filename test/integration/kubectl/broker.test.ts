// The kubectl broker and the guard's `kubectl`, as real processes: the installed wrapper runs the
// client with node, the broker runs a small fake kubectl script standing in for the real binary on
// the daemon's side, and every call lands in cluster-calls.jsonl.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBroker, type RunningBroker } from '../../../src/kubectl/broker/broker.js';
import { CallLog, readCallLog } from '../../../src/kubectl/broker/calls.js';
import { installGuard } from '../../../src/kubectl/broker/install-guard.js';
import { MAX_REQUEST_BYTES } from '../../../src/kubectl/guard/protocol.js';
import { DEFAULT_HELPERS, compilePolicy } from '../../../src/kubectl/policy/policy.js';
import { until } from '../../support/cli-daemon.js';
import { tempDir } from '../../support/runs.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';

const policy = compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in');

/** Records each argv line in calls.txt, then acts on the first word. */
const FAKE_KUBECTL = `#!/bin/sh
echo "$*" >> "$(dirname "$0")/calls.txt"
case "$1" in
  get) echo "NAME    READY   STATUS"; echo "web-1   1/1     Running"; echo "note: from the daemon side" >&2; exit 0 ;;
  logs) echo $$ > "$(dirname "$0")/sleeper.pid"; exec sleep 30 ;;
  version) exit 7 ;;
  top) seq 1 1000000; exit 0 ;;
esac
exit 0
`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

describe('kubectl broker with the guard client', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let broker: RunningBroker | undefined;
  let log: CallLog;
  let kubectl: string;
  let fakeDir: string;

  const start = async (socketDir: string, extra: { callTimeoutMs?: number; maxConcurrent?: number } = {}) => {
    await mkdir(socketDir, { recursive: true });
    log = await CallLog.open(path.join(root.dir, RUN_FILES.clusterCalls));
    broker = await startBroker({
      socketPath: path.join(socketDir, 'kubectl.sock'),
      policy,
      kubectl: { command: path.join(fakeDir, 'kubectl'), env: { PATH: '/usr/bin:/bin' }, cwd: root.dir },
      callTimeoutMs: extra.callTimeoutMs ?? 20_000,
      killGraceMs: 500,
      ...(extra.maxConcurrent ? { maxConcurrent: extra.maxConcurrent } : {}),
      onCall: (r) => log.append(r),
    });
    kubectl = (
      await installGuard(path.join(root.dir, 'guard'), {
        socketPath: broker.socketPath,
        nodePath: process.execPath,
        runId: 'run-1',
      })
    ).kubectl;
  };

  const run = (args: string[], env: Record<string, string> = {}): Promise<Result> =>
    new Promise((resolve) =>
      execFile(
        kubectl,
        args,
        { env: { PATH: '/usr/bin:/bin', ...env }, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
  const fakeCalls = async () =>
    (await readFile(path.join(fakeDir, 'calls.txt'), 'utf8').catch(() => '')).trim();
  const records = async () => (await readCallLog(log.file)).records;

  beforeEach(async () => {
    root = await tempDir('triage-broker-');
    fakeDir = path.join(root.dir, 'daemon-side');
    await mkdir(fakeDir);
    await writeFile(path.join(fakeDir, 'kubectl'), FAKE_KUBECTL, { mode: 0o755 });
  });
  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
    await log?.close();
    await root.cleanup();
  });

  it('passes an allowed call to the daemon-side kubectl and plays back its stdout, stderr and exit code', async () => {
    await start(root.dir);
    const got = await run(['get', 'pods', '-n', 'shop']);
    expect(got).toEqual({
      code: 0,
      stdout: 'NAME    READY   STATUS\nweb-1   1/1     Running\n',
      stderr: 'note: from the daemon side\n',
    });
    expect((await run(['version'])).code).toBe(7);
    expect(await fakeCalls()).toBe('get pods -n shop\nversion');
    const [first] = await records();
    expect(first).toMatchObject({
      tool: 'kubectl',
      by: 'guard',
      argv: ['get', 'pods', '-n', 'shop'],
      normalized: 'get pods --namespace=shop',
      category: 'read',
      decision: 'allowed',
      rule: 'include "kubectl @read"',
      exitCode: 0,
      stdoutBytes: Buffer.byteLength(got.stdout),
      stderrBytes: 27,
    });
    expect(log.totals()).toEqual({ calls: 2, refused: 0 });
  });

  it('refuses kubectl delete with a message and exit 1, never running it, and records the refusal', async () => {
    await start(root.dir);
    const got = await run(['delete', 'pod', 'x']);
    expect(got.code).toBe(1);
    expect(got.stdout).toBe('');
    expect(got.stderr).toMatch(
      /^kubectl guard: refused `kubectl delete pods\/x`: .*tool policy refuses verb delete/,
    );
    expect(await fakeCalls()).toBe('');
    expect(await records()).toMatchObject([
      { decision: 'refused', category: 'mutate', rule: 'exclude "kubectl @mutate"', exitCode: 1 },
    ]);
  });

  it('refuses mutating raw calls, an unknown -X flag, a KUBECONFIG swap and --kubeconfig', async () => {
    await start(root.dir);
    const attempts: [string[], Record<string, string>][] = [
      [['delete', '--raw', '/api/v1/namespaces/shop/pods/web-1'], {}],
      [['create', '--raw', '/api/v1/namespaces/shop/pods'], {}],
      [['get', '--raw', '/api/v1/namespaces/shop/pods/web-1', '-X', 'DELETE'], {}],
      [['get', 'pods'], { KUBECONFIG: '/tmp/x' }],
      [['get', 'pods', '--kubeconfig', '/tmp/x'], {}],
    ];
    for (const [args, env] of attempts) {
      const got = await run(args, env);
      expect([args.join(' '), got.code]).toEqual([args.join(' '), 1]);
    }
    expect(await fakeCalls()).toBe('');
    expect((await records()).map((r) => r.rule)).toEqual([
      'exclude "kubectl --raw DELETE"',
      'exclude "kubectl --raw POST"',
      'guard: unreadable',
      'guard: KUBECONFIG',
      'guard: --kubeconfig',
    ]);
  });

  it('refuses and records a request that is not the guard protocol', async () => {
    await start(root.dir);
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const s = net.createConnection(broker?.socketPath ?? '');
      const chunks: Buffer[] = [];
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('close', () => resolve(Buffer.concat(chunks)));
      s.on('error', reject);
      s.end('{"v":1,"argv":"delete pod x"}\n');
    });
    expect(reply.toString('latin1')).toContain('argv must be an array of strings');
    await until('the record', 5_000, async () => ((await records()).length === 1 ? true : undefined));
    expect(await records()).toMatchObject([
      { decision: 'refused', rule: 'guard: malformed request', argv: [] },
    ]);
    expect(await fakeCalls()).toBe('');
  });

  /** Sends `parts` over a raw connection, one write each, and reads the broker's answer. */
  const rawCall = (parts: string[]): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const s = net.createConnection(broker?.socketPath ?? '');
      const chunks: Buffer[] = [];
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      s.on('error', reject);
      s.once('connect', () => {
        const rest = [...parts];
        const next = (): void => {
          const part = rest.shift();
          if (part === undefined) return;
          if (rest.length === 0) s.end(part);
          else s.write(part, next);
        };
        next();
      });
    });

  it('refuses an argument too long for kubectl to be started (E2BIG) and keeps serving', async () => {
    await start(root.dir);
    // Sent as the agent could send it, straight to the socket (no process could pass it on).
    const argv = ['get', 'pods', '-l', `app=${'x'.repeat(140 * 1024)}`];
    const long = await rawCall([`${JSON.stringify({ v: 1, argv })}\n`]);
    expect(long).toMatch(/argument 4 is \d+ bytes, at most 32768/);
    const many = await run(['get', 'pods', ...Array.from({ length: 8 }, () => 'y'.repeat(30 * 1024))]);
    expect(many.code).toBe(1);
    expect(many.stderr).toMatch(/the arguments are \d+ bytes together, at most 131072/);
    expect(await fakeCalls()).toBe('');
    expect((await run(['get', 'pods'])).code).toBe(0);
  });

  it('answers a call whose kubectl cannot be started as a refusal, and the broker keeps serving', async () => {
    await mkdir(root.dir, { recursive: true });
    log = await CallLog.open(path.join(root.dir, RUN_FILES.clusterCalls));
    // An environment larger than the kernel takes: every spawn fails with E2BIG.
    broker = await startBroker({
      socketPath: path.join(root.dir, 'kubectl.sock'),
      policy,
      kubectl: {
        command: path.join(fakeDir, 'kubectl'),
        env: { PATH: '/usr/bin:/bin', HUGE: 'z'.repeat(4 * 1024 * 1024) },
        cwd: root.dir,
      },
      callTimeoutMs: 20_000,
      onCall: (r) => log.append(r),
    });
    for (let i = 0; i < 2; i++) {
      const reply = await rawCall([`{"v":1,"argv":["get","pods"]}\n`]);
      expect(reply).toMatch(/kubectl guard: .*(E2BIG|could not be started|failed in the broker)/);
    }
    await until('two records', 5_000, async () => ((await records()).length === 2 ? true : undefined));
  });

  it('enforces the request size limit before decoding, also when the newline comes in the last chunk', async () => {
    await start(root.dir);
    const head = '{"v":1,"argv":["get","pods","-l","';
    const first = head + 'a'.repeat(MAX_REQUEST_BYTES - head.length - 10);
    const reply = await rawCall([first, `${'b'.repeat(100)}"]}\n`]);
    expect(reply).toContain(`longer than ${MAX_REQUEST_BYTES} bytes`);
    const oneChunk = await rawCall([`${head}${'c'.repeat(MAX_REQUEST_BYTES)}"]}\n`]);
    expect(oneChunk).toContain(`longer than ${MAX_REQUEST_BYTES} bytes`);
    expect(await fakeCalls()).toBe('');
  });

  it('stops the daemon-side kubectl when the caller goes away', async () => {
    await start(root.dir);
    const child = spawn(kubectl, ['logs', 'web-1', '-f'], {
      env: { PATH: '/usr/bin:/bin' },
      stdio: 'ignore',
    });
    const pidFile = path.join(fakeDir, 'sleeper.pid');
    const pid = Number(
      await until('kubectl logs -f to start', 10_000, () => readFile(pidFile, 'utf8').catch(() => undefined)),
    );
    child.kill('SIGKILL');
    await until('the sleeper to be stopped', 10_000, async () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    await until('the record', 5_000, async () => ((await records()).length === 1 ? true : undefined));
    expect((await records())[0]).toMatchObject({
      decision: 'allowed',
      normalized: 'logs pods/web-1 --follow',
    });
  });

  it('runs calls over the concurrency limit in turn, skipping a caller that left while it waited', async () => {
    await start(root.dir, { maxConcurrent: 1 });
    const spawnCall = (args: string[]) =>
      spawn(kubectl, args, { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'ignore'] });
    const blocker = spawnCall(['logs', 'web-1', '-f']);
    await until('the blocking call to run', 10_000, () =>
      readFile(path.join(fakeDir, 'sleeper.pid'), 'utf8').catch(() => undefined),
    );
    // The quitter queues first, then the waiter: each awaited in the broker's queue.
    const quitter = spawnCall(['get', 'pods', '-n', 'gone']);
    await until('the quitter to queue', 10_000, async () => broker!.queued() === 1 || undefined);
    const waiter = spawnCall(['get', 'pods', '-n', 'shop']);
    let out = '';
    waiter.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const waited = new Promise<number | null>((resolve) => waiter.once('exit', resolve));
    await until('the waiter to queue behind it', 10_000, async () => broker!.queued() === 2 || undefined);
    expect(await fakeCalls()).toBe('logs web-1 -f');
    quitter.kill('SIGKILL');
    // The quitter's call leaves the queue when its connection closes; the waiter is then first.
    await until('the quitter to leave the queue', 10_000, async () => broker!.queued() === 1 || undefined);
    blocker.kill('SIGKILL');
    expect(await waited).toBe(0);
    expect(out).toContain('web-1   1/1     Running');
    expect((await fakeCalls()).split('\n')).toEqual(['logs web-1 -f', 'get pods -n shop']);
  });

  it('ends a call in flight when the broker stops, telling the caller why', async () => {
    await start(root.dir);
    const pending = run(['logs', 'web-1', '-f']);
    await until('kubectl logs -f to start', 10_000, () =>
      readFile(path.join(fakeDir, 'sleeper.pid'), 'utf8').catch(() => undefined),
    );
    await broker?.stop();
    const got = await pending;
    expect(got.code).not.toBe(0);
    await expect(stat(path.join(root.dir, 'kubectl.sock'))).rejects.toThrow(/ENOENT/);
    expect(await records()).toHaveLength(1);
    const after = await run(['get', 'pods']);
    expect(after.stderr).toMatch(/^kubectl guard: cannot reach the broker at .*kubectl\.sock \(ENOENT\)/);
  });

  it('stops a call that runs past kubectl.call_timeout', async () => {
    await start(root.dir, { callTimeoutMs: 300 });
    const got = await run(['logs', 'web-1', '-f']);
    expect(got.code).not.toBe(0);
    expect(got.stderr).toContain(
      'kubectl did not finish within 300 ms (kubectl.call_timeout) and was stopped',
    );
    expect((await records())[0]).toMatchObject({ timedOut: true, decision: 'allowed' });
  });

  it('streams megabytes of output intact (6.9 MB)', async () => {
    await start(root.dir);
    const got = await run(['top', 'pod']);
    expect(got.code).toBe(0);
    const expected = `${Array.from({ length: 1_000_000 }, (_, i) => i + 1).join('\n')}\n`;
    expect(got.stdout.length).toBe(expected.length);
    expect(sha256(got.stdout)).toBe(sha256(expected));
    const [rec] = await records();
    expect(rec?.stdoutBytes).toBe(expected.length);
  });

  it('listens on a socket path longer than a unix socket address holds', async () => {
    const deep = path.join(root.dir, 'w'.repeat(60), '.triage', 'runs', '20261123T120000Z-abcdef');
    await start(deep);
    expect(Buffer.byteLength(broker?.socketPath ?? '')).toBeGreaterThan(108);
    expect((await run(['get', 'pods'])).code).toBe(0);
  });

  it('lets only the owner connect when it hands the socket to a user', async () => {
    await start(root.dir);
    expect((await stat(broker?.socketPath ?? '')).mode & 0o777).toBe(0o666);
    await broker?.stop();
    broker = await startBroker({
      socketPath: path.join(root.dir, 'owned.sock'),
      policy,
      kubectl: { command: path.join(fakeDir, 'kubectl'), env: {}, cwd: root.dir },
      callTimeoutMs: 1_000,
      owner: { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 },
      onCall: () => undefined,
    });
    expect((await stat(broker.socketPath)).mode & 0o777).toBe(0o600);
  });
});
