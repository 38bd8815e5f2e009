// The gateway bridge as the agent's container runs it: a real node process serving a loopback port in
// front of a unix socket, starting the agent CLI as its child with stdio, exit code and signals intact.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BRIDGE_PORT_ENV, BRIDGE_SOCKET_ENV, installBridge } from '../../../src/gateway/install-bridge.js';
import { freePort } from '../../support/net.js';
import { tempDir } from '../../support/runs.js';

let root: { dir: string; cleanup: () => Promise<void> };
let bridge: string;
let server: Server;
let socketPath: string;

beforeAll(async () => {
  root = await tempDir('triage-bridge-');
  bridge = await installBridge(path.join(root.dir, 'gateway-bridge'));
  // A socket path longer than a unix address may be: the bridge reaches it from its folder.
  const deep = path.join(root.dir, 'x'.repeat(60), 'y'.repeat(40));
  await import('node:fs/promises').then((fs) => fs.mkdir(deep, { recursive: true }));
  socketPath = path.join(deep, 'model.sock');
  server = createServer((req, res) => {
    req.resume();
    res.end(`gateway saw ${req.method} ${req.url}`);
  });
  const { listenUnix } = await import('../../../src/util/unix-socket.js');
  await listenUnix(server, socketPath, { mode: 0o600 });
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await root.cleanup();
});

function runBridge(args: string[], stdin = '') {
  return freePort().then((port) => {
    const child = spawn(process.execPath, [bridge, '--', ...args], {
      env: { ...process.env, [BRIDGE_SOCKET_ENV]: socketPath, [BRIDGE_PORT_ENV]: String(port) },
      cwd: root.dir,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(stdin);
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, port, exited, out: () => stdout, err: () => stderr };
  });
}

describe('the gateway bridge', () => {
  it("serves the socket on the loopback port to its child, which keeps the bridge's first working folder and exit code", async () => {
    const script =
      'fetch(`http://127.0.0.1:${process.env.TRIAGE_GATEWAY_PORT}/anthropic/v1/messages`, { method: "POST", body: "{}" })' +
      '.then((r) => r.text()).then((t) => { console.log(t); console.log("cwd=" + process.cwd()); process.exit(3); });';
    const run = await runBridge([process.execPath, '-e', script]);
    const { code } = await run.exited;
    expect(code, run.err()).toBe(3);
    expect(run.out()).toContain('gateway saw POST /anthropic/v1/messages');
    expect(run.out()).toContain(`cwd=${root.dir}`);
  });

  it('passes stdin to the child and its output back', async () => {
    const run = await runBridge(['cat'], 'the prompt on stdin\n');
    expect((await run.exited).code).toBe(0);
    expect(run.out()).toBe('the prompt on stdin\n');
  });

  it('forwards SIGTERM to the child and exits with what the child exits with', async () => {
    const run = await runBridge([
      process.execPath,
      '-e',
      'process.on("SIGTERM", () => { console.log("child got SIGTERM"); process.exit(7); }); console.log("ready"); setInterval(() => {}, 1000);',
    ]);
    await vi.waitFor(() => expect(run.out()).toContain('ready'), { timeout: 10_000 });
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(7);
    expect(run.out()).toContain('child got SIGTERM');
  });

  it('dies by the signal that killed its child', async () => {
    const run = await runBridge([process.execPath, '-e', 'process.kill(process.pid, "SIGKILL")']);
    expect(await run.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('exits 127 with a message naming a command that does not exist', async () => {
    const run = await runBridge(['/no/such/agent-cli']);
    expect((await run.exited).code).toBe(127);
    expect(run.err()).toContain('cannot start /no/such/agent-cli (ENOENT)');
  });
});
