import { type RunBundle } from '../workspace/bundle.js';
import { RUN_FILES } from '../workspace/layout.js';

// The agent's output as it arrives: redacted into the bundle's logs, its tail kept for the adapter's
// parser, the time of the first byte noted, and each chunk offered to a progress reader.

const STDOUT_KEEP = 8 * 1024 * 1024;
const STDERR_KEEP = 1024 * 1024;

export interface RunOutput {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  stdout: TailBuffer;
  stderr: TailBuffer;
  firstOutputAt?: Date;
  close(): Promise<void>;
}

export function openOutput(
  bundle: RunBundle,
  now: () => Date,
  onChunk?: (chunk: Buffer, stream: 'stdout' | 'stderr') => void,
): RunOutput {
  const stdoutLog = bundle.openLog(RUN_FILES.agentStdout);
  const stderrLog = bundle.openLog(RUN_FILES.agentStderr);
  const output: RunOutput = {
    stdout: new TailBuffer(STDOUT_KEEP),
    stderr: new TailBuffer(STDERR_KEEP),
    onStdout: (c) => {
      output.firstOutputAt ??= now();
      output.stdout.push(c);
      stdoutLog.write(c);
      onChunk?.(c, 'stdout');
    },
    onStderr: (c) => {
      output.firstOutputAt ??= now();
      output.stderr.push(c);
      stderrLog.write(c);
      onChunk?.(c, 'stderr');
    },
    close: async () => {
      await Promise.all([stdoutLog.close(), stderrLog.close()]);
    },
  };
  return output;
}

/** Keeps the last `cap` bytes of a stream in memory (parseOutput reads the CLI's final JSON). */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  total = 0;
  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.size += chunk.length;
    // Drop whole chunks only while what remains still covers the cap; text() trims the rest.
    while (this.chunks.length > 1 && this.size - (this.chunks[0]?.length ?? 0) >= this.cap) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.cap)).toString('utf8');
  }
}
