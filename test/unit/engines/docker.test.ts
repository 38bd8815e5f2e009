// The docker engine's pure parts (endpoint choice, hardening, refusals) and its error translation
// against an endpoint where nothing listens.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assertNonRootUser,
  createDockerEngine,
  dockerEndpoint,
  hardenedHostConfig,
  tmpfsOptions,
} from '../../../src/engines/docker/index.js';
import type { RunSpec } from '../../../src/engines/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { isTransient } from '../../../src/util/errors.js';
import { tempDir, testConfig } from '../../support/runs.js';

const config = testConfig('/tmp/unused-root');

describe('docker engine configuration', () => {
  it('takes docker.host first, then DOCKER_HOST, then the first socket that exists', () => {
    const none = () => false;
    expect(
      dockerEndpoint(
        { docker: { ...config.docker, host: 'tcp://10.0.0.1:2375' } },
        { DOCKER_HOST: 'unix:///x' },
        none,
      ),
    ).toBe('tcp://10.0.0.1:2375');
    expect(dockerEndpoint(config, { DOCKER_HOST: 'unix:///x.sock' }, none)).toBe('unix:///x.sock');
    expect(dockerEndpoint(config, {}, (f) => f === '/run/podman/podman.sock')).toBe(
      'unix:///run/podman/podman.sock',
    );
    expect(
      dockerEndpoint(
        config,
        { XDG_RUNTIME_DIR: '/run/user/1000' },
        (f) => f === '/run/user/1000/podman/podman.sock',
      ),
    ).toBe('unix:///run/user/1000/podman/podman.sock');
    expect(dockerEndpoint(config, {}, none)).toBe('unix:///var/run/docker.sock');
  });

  it('refuses to run agents as root, naming the setting', () => {
    for (const user of ['0', 'root', '0:0', 'root:root'])
      expect(() => assertNonRootUser(user)).toThrow(/docker.user .* root/);
    expect(() => assertNonRootUser('')).toThrow(/empty/);
    expect(assertNonRootUser('1000:1000')).toBe('1000:1000');
  });

  it('refuses root in any spelling the engine reads as uid 0', () => {
    for (const user of ['00', '+0', '000:1000', ' root :0']) {
      expect(() => assertNonRootUser(user), user).toThrow(/which is root/);
    }
    expect(assertNonRootUser('1000:1000')).toBe('1000:1000');
    expect(assertNonRootUser('10')).toBe('10');
  });

  it('refuses limits the engine would read as unlimited (memory 0, tmpfs size 0)', () => {
    const spec = { mounts: [], tmpfs: ['/tmp'] };
    expect(() => hardenedHostConfig(testConfig('/tmp/x', { docker: { memory: 0 } }), spec)).toThrow(
      /docker.memory is 0 bytes.*at least 6291456 bytes/,
    );
    expect(() => hardenedHostConfig(testConfig('/tmp/x', { docker: { tmpfs_size: 0 } }), spec)).toThrow(
      /docker.tmpfs_size is 0 bytes/,
    );
  });

  it('builds a hardened HostConfig with read-only binds, limits and no engine socket', () => {
    const hc = hardenedHostConfig(config, {
      mounts: [
        { source: '/srv/ws', target: '/workspace', readOnly: true },
        { source: '/srv/ws/output', target: '/workspace/output', readOnly: false },
      ],
      tmpfs: ['/home/agent', '/tmp'],
    });
    expect(hc).toMatchObject({
      Binds: ['/srv/ws:/workspace:ro', '/srv/ws/output:/workspace/output:rw'],
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Memory: config.docker.memory,
      MemorySwap: config.docker.memory,
      NanoCpus: config.docker.cpus * 1e9,
      PidsLimit: config.docker.pids,
      NetworkMode: config.docker.network,
      Init: true,
    });
    expect(Object.keys(hc.Tmpfs ?? {})).toEqual(['/home/agent', '/tmp']);
    for (const sock of ['/var/run/docker.sock', '/run/podman/podman.sock', '/run/podman']) {
      expect(() =>
        hardenedHostConfig(config, { mounts: [{ source: sock, target: '/x', readOnly: true }], tmpfs: [] }),
      ).toThrow(/container engine socket/);
    }
    expect(() =>
      hardenedHostConfig(config, { mounts: [{ source: '/a:b', target: '/x', readOnly: true }], tmpfs: [] }),
    ).toThrow(/contains ":"/);
  });

  it('makes tmpfs owned by the agent user: U on Podman, uid/gid on Docker', () => {
    expect(tmpfsOptions('podman', '1000:1000', 1024)).toBe('rw,nosuid,nodev,size=1024,U');
    expect(tmpfsOptions('docker', '1000:1001', 1024)).toBe(
      'rw,nosuid,nodev,size=1024,mode=0755,uid=1000,gid=1001',
    );
    expect(tmpfsOptions('docker', 'agent', 1024)).toBe('rw,nosuid,nodev,size=1024,mode=1777');
  });

  it('reports an unreachable engine as a transient error naming the endpoint and how to start one', async () => {
    const { dir, cleanup } = await tempDir('triage-docker-unreachable-');
    try {
      const socket = path.join(dir, 'nothing.sock');
      const engine = createDockerEngine(
        testConfig(dir, { docker: { host: `unix://${socket}` } }),
        silentLogger(),
      );
      const err = await engine.ping().catch((e: unknown) => e);
      expect(isTransient(err)).toBe(true);
      expect(String(err)).toContain(socket);
      expect(String(err)).toMatch(/podman system service|start Docker/);
      const listErr = await engine.list({ a: 'b' }).catch((e: unknown) => e);
      expect(isTransient(listErr)).toBe(true);
    } finally {
      await cleanup();
    }
  });
});

/** A Docker API on a unix socket that answers /version and hands create requests to `onCreate`. */
async function fakeDockerApi(
  dir: string,
  onCreate: (body: string, res: ServerResponse) => void,
): Promise<{ socket: string; requests: string[]; close: () => Promise<void> }> {
  const socket = path.join(dir, 'docker.sock');
  const requests: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests.push(`${req.method} ${req.url}`);
      if (req.url?.startsWith('/version')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ Version: '5.0.0', Components: [{ Name: 'Podman Engine' }] }));
      } else if (req.method === 'POST' && req.url?.startsWith('/containers/create')) {
        onCreate(body, res);
      } else {
        res.writeHead(204);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    socket,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function runSpec(secret: string): RunSpec {
  return {
    runId: 'run-secret',
    incidentId: 'inc',
    labels: {},
    image: 'img:1',
    command: 'agent',
    args: [],
    env: { HOME: '/home/agent' },
    secretEnv: { ANTHROPIC_API_KEY: secret },
    stdin: '',
    workdir: '/home/agent',
    mounts: [],
    tmpfs: [],
    stateDir: '/state',
    onStdout: () => undefined,
    onStderr: () => undefined,
  };
}

describe('docker engine errors', () => {
  it('never carries a secret from an engine error that echoes the create request (Env) back', async () => {
    const { dir, cleanup } = await tempDir('triage-docker-echo-');
    const secret = 'sk-ant-echoed-secret-0123456789';
    const api = await fakeDockerApi(dir, (body, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `cannot create container from ${body}` }));
    });
    try {
      const engine = createDockerEngine(
        testConfig(dir, { docker: { host: `unix://${api.socket}` } }),
        silentLogger(),
      );
      const err = (await engine.start(runSpec(secret)).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(Error);
      // The engine's words are kept (what failed), the key is not, anywhere in the error chain.
      expect(err.message).toContain('cannot create container');
      expect(err.message).toContain('ANTHROPIC_API_KEY=[REDACTED]');
      const chain = [err.message, err.stack, String((err.cause as Error | undefined)?.message)];
      expect(JSON.stringify(chain)).not.toContain(secret);
      expect(JSON.stringify(err)).not.toContain(secret);
    } finally {
      await api.close();
      await cleanup();
    }
  });

  it('removes a container whose create answered only after the API deadline', async () => {
    const { dir, cleanup } = await tempDir('triage-docker-late-');
    const api = await fakeDockerApi(dir, (_body, res) => {
      setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ Id: 'late-container', Warnings: [] }));
      }, 300);
    });
    try {
      const engine = createDockerEngine(
        testConfig(dir, { docker: { host: `unix://${api.socket}` } }),
        silentLogger(),
        { apiTimeoutMs: 100 },
      );
      const err = await engine.start(runSpec('sk-ant-not-relevant-0123456789')).catch((e: unknown) => e);
      expect(isTransient(err)).toBe(true);
      expect(String(err)).toMatch(/did not answer within 100 ms while trying to create the container/);
      const deadline = Date.now() + 10_000;
      while (!api.requests.some((r) => r.startsWith('DELETE /containers/late-container'))) {
        if (Date.now() > deadline)
          throw new Error(`late container not removed within 10000 ms: ${api.requests.join(', ')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(api.requests.find((r) => r.startsWith('DELETE'))).toMatch(/force=true/);
    } finally {
      await api.close();
      await cleanup();
    }
  });
});
