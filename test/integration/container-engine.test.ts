// The hardening the daemon relies on, checked against the real engine through dockerode: the
// container itself reports what it sees, and the test parses its demultiplexed logs.
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireEngine, requireTestImage, TEST_IMAGE } from '../support/engine.js';

const MEMORY = 64 * 1024 * 1024;
const PIDS = 64;
const NANO_CPUS = 0.5e9;

const HARDENED: Docker.HostConfig = {
  ReadonlyRootfs: true,
  Tmpfs: { '/tmp': 'rw,size=16m' },
  CapDrop: ['ALL'],
  SecurityOpt: ['no-new-privileges'],
  Memory: MEMORY,
  PidsLimit: PIDS,
  NanoCpus: NANO_CPUS,
};

// Prints `key=value` facts. cgroup v2 files first, then v1 (this CI kernel runs hybrid v1).
const FACTS_SCRIPT = `
echo "uid=$(id -u)"
echo "gid=$(id -g)"
if (echo x > /root-probe) 2>/tmp/root-err; then echo "root_write=ok"; else echo "root_write=$(cat /tmp/root-err)"; fi
if echo x > /tmp/probe && [ "$(cat /tmp/probe)" = x ]; then echo "tmp_write=ok"; else echo "tmp_write=failed"; fi
echo "cap_eff=$(grep '^CapEff:' /proc/self/status | tr -d ' \\t' | cut -d: -f2)"
echo "no_new_privs=$(grep '^NoNewPrivs:' /proc/self/status | tr -d ' \\t' | cut -d: -f2)"
echo "memory_limit=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
echo "pids_limit=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max)"
if [ -f /sys/fs/cgroup/cpu.max ]; then echo "cpu_max=$(cat /sys/fs/cgroup/cpu.max)"
else echo "cpu_max=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"; fi
`;

const engine = await requireEngine();

interface Run {
  container: Docker.Container;
  exitCode: number;
  stdout: string;
  stderr: string;
}

function collect(stream: PassThrough): Promise<string> {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8'))));
}

function parseFacts(stdout: string): Record<string, string> {
  const facts: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) facts[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return facts;
}

describe.skipIf(!engine)('container engine through dockerode', () => {
  const docker = engine as Docker;
  const created: Docker.Container[] = [];

  beforeAll(async () => {
    await requireTestImage(docker);
  });

  afterEach(async () => {
    const containers = created.splice(0);
    await Promise.all(
      containers.map((c) =>
        c.remove({ force: true }).catch((err: { statusCode?: number }) => {
          if (err.statusCode !== 404) throw err;
        }),
      ),
    );
  });

  async function create(cmd: string[], hostConfig: Docker.HostConfig = HARDENED): Promise<Docker.Container> {
    const container = await docker.createContainer({
      Image: TEST_IMAGE,
      Cmd: cmd,
      User: '1000:1000',
      Tty: false,
      AttachStdout: true,
      AttachStderr: true,
      HostConfig: hostConfig,
      Labels: { 'org.triage-runner.test': 'container-engine' },
    });
    created.push(container);
    return container;
  }

  async function run(script: string): Promise<Run> {
    const container = await create(['sh', '-c', script]);
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    // Tty:false logs are multiplexed (8-byte frame headers); demuxStream splits stdout from stderr.
    const logs = await container.logs({ follow: true, stdout: true, stderr: true });
    const out = new PassThrough();
    const err = new PassThrough();
    const texts = Promise.all([collect(out), collect(err)]);
    docker.modem.demuxStream(logs, out, err);
    await new Promise<void>((resolve, reject) => {
      logs.on('end', resolve);
      logs.on('error', reject);
    });
    out.end();
    err.end();
    const [stdout, stderr] = await texts;
    return { container, exitCode: StatusCode, stdout, stderr };
  }

  it('reports the exit code and keeps stdout and stderr apart', async () => {
    const r = await run('echo to-stdout; echo to-stderr >&2; exit 7');
    expect(r.exitCode).toBe(7);
    expect(r.stdout).toBe('to-stdout\n');
    expect(r.stderr).toBe('to-stderr\n');
  });

  it('runs as uid 1000 with a read-only root filesystem and a writable /tmp tmpfs', async () => {
    const r = await run(FACTS_SCRIPT);
    expect(r.exitCode, r.stderr).toBe(0);
    const facts = parseFacts(r.stdout);
    expect(facts.uid).toBe('1000');
    expect(facts.gid).toBe('1000');
    expect(facts.root_write).toMatch(/read-only file system/i);
    expect(facts.tmp_write).toBe('ok');
  });

  it('drops every capability and sets no_new_privs', async () => {
    const facts = parseFacts((await run(FACTS_SCRIPT)).stdout);
    expect(facts.cap_eff).toBe('0000000000000000');
    expect(facts.no_new_privs).toBe('1');
  });

  it('applies the 64 MiB memory, 64 pids and half-CPU limits in the cgroup and in HostConfig', async () => {
    const r = await run(FACTS_SCRIPT);
    const facts = parseFacts(r.stdout);
    expect(Number(facts.memory_limit)).toBe(MEMORY);
    expect(Number(facts.pids_limit)).toBe(PIDS);
    const [quota, period] = (facts.cpu_max ?? '').split(' ').map(Number);
    expect(quota! / period!).toBeCloseTo(0.5);

    const { HostConfig } = await r.container.inspect();
    expect(HostConfig.Memory).toBe(MEMORY);
    expect(HostConfig.PidsLimit).toBe(PIDS);
    expect(HostConfig.NanoCpus).toBe(NANO_CPUS);
    expect(HostConfig.ReadonlyRootfs).toBe(true);
    // Docker echoes ['ALL']; Podman lists the default capabilities it dropped instead.
    const dropped = ((HostConfig.CapDrop ?? []) as string[]).map((c) => c.replace(/^CAP_/, ''));
    const defaults = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'NET_RAW', 'SETGID', 'SETUID'];
    expect(dropped.includes('ALL') || defaults.every((c) => dropped.includes(c)), dropped.join(',')).toBe(
      true,
    );
  });

  it('leaves no container behind once removed (inspect answers 404)', async () => {
    const container = await create(['true']);
    await container.start();
    await container.wait();
    await container.remove({ force: true });
    await expect(container.inspect()).rejects.toMatchObject({ statusCode: 404 });
  });
});
