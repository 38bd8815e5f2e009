import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

// The agent container's way to the daemon: it has no network but loopback, so this bridge listens on
// 127.0.0.1:<port> inside it, passes each connection to the model gateway's unix socket in the run
// folder, and runs the agent CLI (the arguments after `--`) as its child: stdio passed through,
// signals forwarded, the CLI's exit code or signal its own. Node builtins only: it is installed into
// the run folder and run by the image's node.

// The names are install-bridge.ts's BRIDGE_SOCKET_ENV and BRIDGE_PORT_ENV (this file exports nothing: it runs).
const SOCKET_ENV = 'TRIAGE_GATEWAY_SOCKET';
const PORT_ENV = 'TRIAGE_GATEWAY_PORT';

/** Linux's limit for a socket path is 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 100;
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

function fail(message: string): never {
  process.stderr.write(`gateway bridge: ${message}\n`);
  process.exit(126);
}

const socketPath = process.env[SOCKET_ENV];
const port = Number(process.env[PORT_ENV]);
const sep = process.argv.indexOf('--');
const [command, ...args] = sep === -1 ? [] : process.argv.slice(sep + 1);
if (!socketPath) fail(`${SOCKET_ENV} is not set`);
if (!Number.isInteger(port) || port <= 0 || port > 65535) fail(`${PORT_ENV} is not a port number`);
if (!command) fail('no command after `--`');

const cwd = process.cwd();
// A socket path too long for an address is reached from its folder (the child keeps the first cwd).
const target =
  Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH_BYTES ? socketPath : path.basename(socketPath);
if (target !== socketPath) process.chdir(path.dirname(socketPath));

const server = net.createServer((client) => {
  const upstream = net.createConnection(target);
  // Small requests and SSE events go out at once (no Nagle delay on the loopback hop).
  client.setNoDelay(true);
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
});
server.on('error', (err) => fail(`cannot listen on 127.0.0.1:${port} (${err.message})`));
server.listen(port, '127.0.0.1', () => {
  const child = spawn(command, args, { stdio: 'inherit', cwd });
  for (const signal of FORWARDED) process.on(signal, () => child.kill(signal));
  child.on('error', (err: NodeJS.ErrnoException) => {
    process.stderr.write(`gateway bridge: cannot start ${command} (${err.code ?? err.message})\n`);
    process.exit(err.code === 'ENOENT' ? 127 : 126);
  });
  child.on('exit', (code, signal) => {
    server.close();
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
});
