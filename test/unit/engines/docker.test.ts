// The docker engine's pure parts (endpoint choice, hardening, refusals) and its error translation
// against an endpoint where nothing listens.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assertNonRootUser,
  createDockerEngine,
  dockerEndpoint,
  hardenedHostConfig,
  tmpfsOptions,
} from '../../../src/engines/docker.js';
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
