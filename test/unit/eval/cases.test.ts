// The shipped eval cases: every expected.yaml is valid, every cluster/ compiles, and what the answer
// key names exists in the recordings (a typo in a case would silently make it unpassable).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCluster } from '../../../src/eval/cases/compile.js';
import { compilePattern } from '../../../src/eval/cases/expected.js';
import { discoverCases, loadCase } from '../../../src/eval/cases/load.js';
import { REPO_ROOT } from '../../support/runs.js';

const SUITE = path.join(REPO_ROOT, 'examples', 'evals');

describe('shipped eval cases', async () => {
  const dirs = await discoverCases(SUITE);

  it('ship at least the twelve required scenarios', () => {
    expect(dirs.map((d) => path.basename(d))).toEqual(
      expect.arrayContaining([
        'crashloop-bad-config',
        'crashloop-missing-secret-key',
        'oomkilled-low-limit',
        'imagepull-tag-typo',
        'imagepull-auth-failure',
        'pending-insufficient-cpu',
        'pending-taint-affinity',
        'pending-pvc-no-storageclass',
        'failed-rollout-readiness',
        'service-selector-mismatch',
        'no-cluster-access',
        'alert-contradicts-cluster',
      ]),
    );
  });

  it.each(dirs.map((d) => [path.basename(d), d]))(
    '%s: answer key valid, recordings compile, entities exist',
    async (name, dir) => {
      const evalCase = await loadCase(dir);
      const cluster = await compileCluster(dir, name);
      // A case without cluster access answers nothing: what its key names is in the alert.
      if (cluster.unreachable) {
        expect(cluster.objects).toEqual([]);
        const alert = await readFile(path.join(dir, 'incident.json'), 'utf8');
        for (const entity of evalCase.expected.root_cause.entities)
          expect(
            entity.match.some((m) => compilePattern(m).test(alert)),
            entity.id,
          ).toBe(true);
        return;
      }
      expect(cluster.objects.length).toBeGreaterThan(3);
      const names = cluster.objects.map((o) => `${o.type}/${o.name}`).join('\n');
      for (const entity of evalCase.expected.root_cause.entities) {
        const found = entity.match.some((m) => compilePattern(m).test(names));
        expect(found, `${name}: entity ${entity.id} matches no recorded object`).toBe(true);
      }
      for (const related of evalCase.expected.root_cause.related) {
        expect(names, `${name}: related ${related} is not a recorded object`).toMatch(
          new RegExp(`/${related.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
        );
      }
    },
  );
});
