import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import { Refusal, call } from './http.js';
import { ENV, FrameDecoder, INPUTS_PATH, PROGRAM_SUBPATH, type EndRecord } from './protocol.js';

// The init container of an agent pod: fetches the run's files from the daemon (its Service port, the
// run's files token) into the pod's emptyDir, each at its agent path below the root, so that the agent
// container's mounts (subPaths of that emptyDir) find them in place. A daemon that does not answer (it
// restarts, a standby takes over) is asked again for about a minute; a refusal (a bad or expired token,
// a run that is over, files over the bound) ends the pod at once with the daemon's words. Runs on import
// (the pod's bootstrap imports it); node builtins only.

/** Waits between attempts: about a minute in all, the time a standby needs to take over. */
const BACKOFF_MS = [1000, 2000, 4000, 8000, 15_000, 15_000, 15_000];
const TIMEOUT_MS = 60_000;

function fail(message: string): never {
  process.stderr.write(`run-files: ${message}\n`);
  process.exit(1);
}

function writeAll(fd: number, chunk: Buffer): void {
  let done = 0;
  while (done < chunk.length) done += writeSync(fd, chunk, done, chunk.length - done);
}

/** Removes what an attempt cut short wrote, keeping the programs. */
function clear(root: string): void {
  const keep = PROGRAM_SUBPATH.split('/')[0];
  for (const name of readdirSync(root))
    if (name !== keep) rmSync(path.join(root, name), { recursive: true, force: true });
}

async function fetchOnce(root: string, url: string, token: string): Promise<EndRecord> {
  const res = await call(url, { method: 'GET', token, timeoutMs: TIMEOUT_MS });
  let fd: number | undefined;
  const decoder = new FrameDecoder(
    {
      record: (r) => {
        // Paths are absolute and normalized without `..` (the decoder checks): they stay below the root.
        const at = path.join(root, r.p);
        if (r.k === 'd') return void mkdirSync(at, { recursive: true, mode: 0o755 });
        mkdirSync(path.dirname(at), { recursive: true, mode: 0o755 });
        const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
        fd = openSync(at, flags, r.x ? 0o755 : 0o644);
      },
      data: (chunk) => writeAll(fd as number, chunk),
      fileEnd: () => {
        closeSync(fd as number);
        fd = undefined;
      },
      end: () => undefined,
    },
    // The daemon bounds what it sends (kubernetes.run_files.max_input_bytes); the emptyDir's size limit too.
    { maxBytes: Number.MAX_SAFE_INTEGER, maxRecords: 1_000_000 },
  );
  for await (const chunk of res.pipe(createGunzip())) decoder.push(chunk as Buffer);
  return decoder.finish();
}

async function main(): Promise<void> {
  const url = process.env[ENV.url];
  const tokenFile = process.env[ENV.tokenFile];
  const root = process.env[ENV.root];
  if (!url || !tokenFile || !root) fail(`${ENV.url}, ${ENV.tokenFile} and ${ENV.root} must be set`);
  let token: string;
  try {
    token = readFileSync(tokenFile, 'utf8').trim();
  } catch (err) {
    fail(
      `cannot read the run's token at ${tokenFile} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  const inputs = new URL(INPUTS_PATH.slice(1), url.endsWith('/') ? url : `${url}/`).href;
  for (let attempt = 0; ; attempt++) {
    try {
      const end = await fetchOnce(root, inputs, token);
      process.stdout.write(`run-files: ${end.files} files, ${end.bytes} bytes from the daemon\n`);
      return;
    } catch (err) {
      if (err instanceof Refusal && err.final) fail(`the run's files were refused: ${err.message}`);
      const why = err instanceof Error ? err.message : String(err);
      const wait = BACKOFF_MS[attempt];
      if (wait === undefined) fail(`the run's files could not be fetched from ${inputs}: ${why}`);
      process.stderr.write(
        `run-files: fetching from ${inputs} failed (${why}); trying again in ${wait} ms\n`,
      );
      clear(root);
      await sleep(wait);
    }
  }
}

await main();
