// A daemon SIGKILLed between creating an agent's container and starting it (docker engine, real
// Podman): the next daemon removes the never-started container and runs the incident again, to
// `succeeded`, instead of adopting the container as a failed run that never ran. The kill happens at
// exactly that point: the daemon talks to the engine through a socket proxy that kills it on the start
// request and never forwards it.
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_LABELS } from '../../../src/engines/labels.js';
import {
  dropIncident,
  startCliDaemon,
  until,
  waitForFinalRun,
  type CliDaemon,
} from '../../support/cli-daemon.js';
import {
  PODMAN_SOCKET,
  TEST_IMAGE,
  dockerHost,
  requireEngine,
  requireTestImage,
} from '../../support/engine.js';
import { tempDir } from '../../support/runs.js';
import { incidentJson } from '../../support/incidents.js';

const docker = await requireEngine();

/** Forwards a Docker API socket to `upstream`; calls `onStart` (and drops the request) on a container start. */
async function startProxy(socket: string, upstream: string, onStart: () => void): Promise<Server> {
  const server = createServer((client: Socket) => {
    const engine = createConnection(upstream);
    client.on('data', (chunk: Buffer) => {
      if (/^POST \S*\/containers\/[^/\s]+\/start/m.test(chunk.toString('latin1'))) {
        onStart();
        client.destroy();
        engine.destroy();
        return;
      }
      engine.write(chunk);
    });
    engine.pipe(client);
    client.on('error', () => engine.destroy());
    engine.on('error', () => client.destroy());
    client.on('close', () => engine.destroy());
  });
  server.listen(socket);
  await once(server, 'listening');
  return server;
}

describe.skipIf(!docker)('a daemon killed between container create and start', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  const daemons: CliDaemon[] = [];
  let proxy: Server | undefined;

  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-never-started-');
  });
  afterAll(async () => {
    for (const d of daemons) await d.stop();
    proxy?.close();
    await root?.cleanup();
  });

  it('leaves a created container that the next daemon removes, then runs the incident to succeeded', async () => {
    const incidents = path.join(root.dir, 'incidents');
    const upstream = dockerHost().replace(/^unix:\/\//, '') || PODMAN_SOCKET;
    const proxied = path.join(root.dir, 'engine.sock');
    // The daemon the proxy kills, set once it has started.
    const target: { daemon?: CliDaemon; killedAtStart: boolean } = { killedAtStart: false };
    proxy = await startProxy(proxied, upstream, () => {
      target.killedAtStart = true;
      target.daemon?.child.kill('SIGKILL');
    });
    const config = (host: string) => ({
      workspaces_root: incidents,
      agent: { image: TEST_IMAGE, command: '/usr/local/bin/fake-agent', timeout: '2m' },
      docker: { host, memory: '256m', network: 'none' },
      // The FROM-scratch test image has no node to run the gateway's bridge in.
      gateway: { enabled: false },
      scheduling: { lease_ttl: '3s', rescan_interval: '500ms' },
    });
    const env = { PATH: process.env.PATH, HOME: root.dir, ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef' };
    const args = ['--engine', 'docker', '--agent', 'claude'];
    const first = await startCliDaemon({ dir: root.dir, config: config(`unix://${proxied}`), args, env });
    target.daemon = first;
    daemons.push(first);

    const ws = path.join(incidents, 'never-started');
    await dropIncident(ws, incidentJson({ incidentId: 'never-started-1' }));
    await until('the first daemon to be killed at the container start', 90_000, async () =>
      first.child.signalCode === 'SIGKILL' ? true : undefined,
    );
    expect(target.killedAtStart).toBe(true);
    const stateAfterKill = JSON.parse(await readFile(path.join(ws, '.triage', 'state.json'), 'utf8')) as {
      state: string;
      runs: { id: string }[];
    };
    const killedRun = stateAfterKill.runs.at(-1)?.id ?? '';
    const created = await docker!.listContainers({
      all: true,
      filters: { label: [`${RUN_LABELS.run}=${killedRun}`] },
    });
    expect(created.map((c) => c.State)).toEqual(['created']);

    const second = await startCliDaemon({ dir: root.dir, config: config(dockerHost()), args, env });
    daemons.push(second);
    const { state, result } = await waitForFinalRun(ws, 120_000, second.tail);
    expect(state.state, second.tail()).toBe('succeeded');
    expect(result).toMatchObject({ status: 'succeeded', exitCode: 0, engine: 'docker' });
    // The never-started run is not recorded as failed, and its container is gone.
    expect(state.runs.filter((r) => r.status === 'failed')).toEqual([]);
    expect(state.runs.at(-1)?.id).not.toBe(killedRun);
    expect(
      await docker!.listContainers({ all: true, filters: { label: [`${RUN_LABELS.run}=${killedRun}`] } }),
    ).toEqual([]);
  });
});
