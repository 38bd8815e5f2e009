// Start-up cost of the compiled CLI against bare `node -e 0` measured in the same run: wall time of
// `--version` and `validate-config configs/config.example.yaml`, and the RSS of an idle daemon a few
// seconds after start (process engine; docker engine through DOCKER_HOST), with and without
// --max-semi-space-size=2 (the flag the Dockerfile, systemd unit and compose file pass).
// Needs the compiled CLI (npm run build). Run: npx tsx bench/cold-start.ts   (BENCH_ITERATIONS=5)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { printTable } from './table.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = path.join(REPO, 'dist/cli/main.js');
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5);
const DOCKER_HOST = process.env.DOCKER_HOST ?? 'unix:///run/podman/podman.sock';
const SETTLE_MS = 3000;

/** Median wall time of `node <args>` over ITERATIONS runs, in ms. */
function wallMs(args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: REPO, stdio: 'ignore' });
    times.push(performance.now() - t0);
    if (r.status !== 0 && args[0] !== '-e') throw new Error(`node ${args.join(' ')} exited ${r.status}`);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;
}

/** RSS (MiB, from /proc) of a process running `args`, SETTLE_MS after it said it was ready. */
async function idleRssMiB(args: string[], env: Record<string, string>, ready: RegExp): Promise<number> {
  const child = spawn(process.execPath, args, { cwd: REPO, env: { ...process.env, ...env } });
  let out = '';
  const onData = (d: Buffer) => (out += d.toString());
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  try {
    const deadline = Date.now() + 30_000;
    while (!ready.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`not ready (exit ${child.exitCode}): ${out.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const dir = await mkdtemp(path.join(tmpdir(), 'bench-cold-start-'));
try {
  const configFor = async (engine: string) => {
    const file = path.join(dir, `${engine}.yaml`);
    await writeFile(
      file,
      stringify({
        workspaces_root: path.join(dir, `root-${engine}`),
        engine,
        skills: { sources: [], cache_dir: path.join(dir, 'skills'), disable_triage_preload: true },
        http: { port: 0 },
        log: { level: 'info' },
      }),
    );
    return file;
  };
  const bare = wallMs(['-e', '0']);
  const version = wallMs([MAIN, '--version']);
  const validate = wallMs([MAIN, 'validate-config', 'configs/config.example.yaml']);
  const bareRss = await idleRssMiB(['-e', 'console.log("up"); setInterval(() => {}, 1000)'], {}, /up/);
  const ready = /daemon ready|watching/i;
  const env = { HOME: dir, DOCKER_HOST };
  const processFile = await configFor('process');
  const dockerFile = await configFor('docker');
  const flag = '--max-semi-space-size=2';
  const rows: string[][] = [
    ['node -e 0 (baseline)', `${bare.toFixed(0)} ms`, '1.0×'],
    ['--version', `${version.toFixed(0)} ms`, `${(version / bare).toFixed(1)}×`],
    ['validate-config (example config)', `${validate.toFixed(0)} ms`, `${(validate / bare).toFixed(1)}×`],
    ['idle node (baseline RSS)', `${bareRss.toFixed(0)} MiB`, '1.0×'],
  ];
  for (const [engine, file] of [
    ['process', processFile],
    ['docker', dockerFile],
  ] as const)
    for (const flags of [[], [flag]]) {
      const rss = await idleRssMiB([...flags, MAIN, 'daemon', '--config', file, '--create-root'], env, ready);
      rows.push([
        `idle daemon RSS, ${engine} engine${flags.length ? ` ${flag}` : ''}`,
        `${rss.toFixed(0)} MiB`,
        `${(rss / bareRss).toFixed(1)}×`,
      ]);
    }
  printTable(`Cold start (median of ${ITERATIONS}; RSS ${SETTLE_MS} ms after ready)`, rows);
} finally {
  await rm(dir, { recursive: true, force: true });
}
