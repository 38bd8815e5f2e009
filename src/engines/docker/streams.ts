import type { Duplex, Readable } from 'node:stream';
import type Docker from 'dockerode';
import type { Logger } from '../../log/logger.js';
import { errorMessage } from '../../util/errors.js';

// A container's standard streams: stdin written once through a hijacked attach, stdout and stderr
// demultiplexed from the engine's framed stream.

type DialFn = (opts: Record<string, unknown>, cb: (err: Error | null, stream: Duplex) => void) => void;

/**
 * Attaches stdin/stdout/stderr before start. dockerode's `attach` sends its options as a JSON request
 * body, which Podman hands to the container as the first bytes of stdin; dialling with an empty
 * body keeps stdin byte-identical on both engines. The upgraded socket is a raw duplex: writing and
 * then ending it delivers stdin and EOF (StdinOnce closes the container's stdin after that).
 */
export function attachHijacked(docker: Docker, id: string): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const dial = (docker.modem as unknown as { dial: DialFn }).dial.bind(docker.modem);
    dial(
      {
        path: `/containers/${id}/attach?`,
        method: 'POST',
        isStream: true,
        hijack: true,
        openStdin: false,
        file: Buffer.alloc(0),
        statusCodes: { 200: true, 101: true, 404: 'no such container', 500: 'server error' },
        options: { stream: true, stdin: true, stdout: true, stderr: true },
      },
      (err, stream) => (err ? reject(err) : resolve(stream)),
    );
  });
}

/** Splits the engine's framed output into stdout and stderr; resolves once the stream has ended. */
export function demux(
  docker: Docker,
  stream: Readable,
  onStdout: (c: Buffer) => void,
  onStderr: (c: Buffer) => void,
  log: Logger,
): Promise<void> {
  const sink = (fn: (c: Buffer) => void) =>
    ({ write: (c: Buffer) => (fn(c), true) }) as unknown as NodeJS.WritableStream;
  docker.modem.demuxStream(stream, sink(onStdout), sink(onStderr));
  return new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', (err) => {
      log.debug({ err: errorMessage(err) }, 'container output stream error');
      resolve();
    });
  });
}
