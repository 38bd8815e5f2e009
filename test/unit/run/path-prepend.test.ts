// RunOverrides.pathPrepend: the folders come first on the agent's PATH (host paths under the process
// engine, read-only mounts under container engines) and on the triage script's, which also learns
// where the run bundle is.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { triageEnv } from '../../../src/context/triage.js';
import {
  CONTAINER_DEFAULT_PATH,
  CONTAINER_PATH_PREPEND,
  containerLayout,
  hostLayout,
} from '../../../src/run/layout.js';
import { testConfig } from '../../support/runs.js';

const adapter = { skillsDirs: ['.claude/skills'], listsSkills: true, writableHomeDirs: ['.claude'] };
const root = '/tmp/triage-path-prepend-test';
const base = {
  config: testConfig(root),
  workspaceDir: path.join(root, 'ws'),
  runId: 'r1',
  bundleDir: path.join(root, 'ws', '.triage', 'runs', 'r1'),
  adapter,
  tmpDir: root,
};

describe('pathPrepend', () => {
  it('puts the folders before the daemon PATH under the process engine', () => {
    const layout = hostLayout({
      ...base,
      placement: 'host',
      pathPrepend: ['/shim/a', '/shim/b'],
      basePath: '/usr/bin:/bin',
    });
    expect(layout.env.PATH).toBe('/shim/a:/shim/b:/usr/bin:/bin');
  });

  it('mounts the folders read-only in a container and prepends their mount points', () => {
    const layout = containerLayout({ ...base, placement: 'container', pathPrepend: ['/shim/a', '/shim/b'] });
    expect(layout.mounts).toEqual(
      expect.arrayContaining([
        { source: '/shim/a', target: `${CONTAINER_PATH_PREPEND}/0`, readOnly: true },
        { source: '/shim/b', target: `${CONTAINER_PATH_PREPEND}/1`, readOnly: true },
      ]),
    );
    expect(layout.env.PATH).toBe(
      `${CONTAINER_PATH_PREPEND}/0:${CONTAINER_PATH_PREPEND}/1:${CONTAINER_DEFAULT_PATH}`,
    );
  });

  it('leaves PATH alone when nothing is prepended', () => {
    expect(hostLayout({ ...base, placement: 'host', basePath: '/usr/bin' }).env.PATH).toBeUndefined();
    expect(containerLayout({ ...base, placement: 'container' }).env.PATH).toBeUndefined();
  });

  it('gives the triage script the prepended PATH, the run bundle and its stage', () => {
    const incident = { incidentId: 'i1', namespace: 'shop', cluster: 'c1' } as Parameters<
      typeof triageEnv
    >[1];
    const env = triageEnv(
      base.config,
      incident,
      { PATH: '/usr/bin' },
      { runDir: base.bundleDir, pathPrepend: ['/shim'] },
    );
    expect(env).toMatchObject({
      PATH: '/shim:/usr/bin',
      TRIAGE_RUN_DIR: base.bundleDir,
      TRIAGE_STAGE: 'triage',
    });
    expect(triageEnv(base.config, incident, { PATH: '/usr/bin' }).PATH).toBe('/usr/bin');
  });
});
