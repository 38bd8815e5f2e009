import net from 'node:net';
import path from 'node:path';
import {
  FRAME_EXIT,
  FRAME_STDERR,
  FRAME_STDOUT,
  FrameReader,
  PROTOCOL_VERSION,
  encodeRequest,
  exitCodeOf,
} from './protocol.js';

// The guard's `kubectl`: first on the agent's PATH, it sends its arguments to the run's kubectl broker
// over a unix socket and plays back what the real kubectl printed and its exit code. It holds no
// credentials and decides nothing: the broker does both. Imports node builtins and protocol.js only,
// because it is installed on its own into the agent's environment.

/** Set by the generated `kubectl` wrapper: the broker's socket as the agent sees it. */
export const SOCKET_ENV = 'TRIAGE_KUBECTL_BROKER';

export interface ClientIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Linux's limit for a socket path is 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 100;

/** Connects to a unix socket; a path too long for an address is reached from its folder. */
function connectUnix(socketPath: string): net.Socket {
  if (Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH_BYTES) return net.createConnection(socketPath);
  process.chdir(path.dirname(socketPath));
  return net.createConnection(path.basename(socketPath));
}

/** Runs one kubectl call through the broker; resolves with the exit code to exit with. */
export function runClient(
  argv: string[],
  env: Record<string, string | undefined>,
  io: ClientIo,
  connect: (socketPath: string) => net.Socket = connectUnix,
): Promise<number> {
  const socketPath = env[SOCKET_ENV];
  if (!socketPath) {
    io.stderr.write(`kubectl guard: ${SOCKET_ENV} is not set, so there is no kubectl broker to ask\n`);
    return Promise.resolve(1);
  }
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const reader = new FrameReader();
    let exitCode: number | undefined;
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(code);
    };
    const write = (out: NodeJS.WritableStream, payload: Buffer) => {
      // Slow readers (a pipe into `less`) hold the broker back instead of filling memory.
      if (!out.write(payload)) {
        socket.pause();
        out.once('drain', () => socket.resume());
      }
    };
    socket.on('connect', () => {
      const request = {
        v: PROTOCOL_VERSION,
        argv,
        ...(env.KUBECONFIG !== undefined ? { kubeconfig: env.KUBECONFIG } : {}),
      };
      // The write side stays open: the broker reads its end as the caller going away.
      socket.write(encodeRequest(request));
    });
    socket.on('data', (chunk: Buffer) => {
      let frames;
      try {
        frames = reader.push(chunk);
      } catch (err) {
        io.stderr.write(`kubectl guard: the broker sent something unreadable (${(err as Error).message})\n`);
        finish(1);
        return;
      }
      for (const frame of frames) {
        if (frame.type === FRAME_STDOUT) write(io.stdout, frame.payload);
        else if (frame.type === FRAME_STDERR) write(io.stderr, frame.payload);
        else if (frame.type === FRAME_EXIT) exitCode = exitCodeOf(frame);
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (exitCode !== undefined) return finish(exitCode);
      io.stderr.write(
        `kubectl guard: cannot reach the kubectl broker at ${socketPath} (${err.code ?? err.message}); ` +
          'the run may be ending, or this environment has no cluster access\n',
      );
      finish(1);
    });
    socket.on('close', () => {
      if (exitCode !== undefined) return finish(exitCode);
      io.stderr.write('kubectl guard: the broker closed the connection before kubectl finished\n');
      finish(1);
    });
    // Output that cannot be delivered (`kubectl logs … | head`) ends the call.
    for (const out of [io.stdout, io.stderr]) out.on('error', () => finish(exitCode ?? 1));
  });
}
