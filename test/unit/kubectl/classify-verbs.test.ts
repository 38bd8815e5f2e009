import { describe, expect, it } from 'vitest';
import { KUBECTL_VERBS } from '../../../src/kubectl/parse.js';
import { kubectlCatalog } from '../../../src/kubectl/policy/classify.js';

// The guard's verb categories come from the parser's one list of verbs: policy names the reads and
// workload access; every other verb of the list is a mutation, so a verb the parser learns is refused
// until policy says otherwise.

const bare = () =>
  Object.fromEntries(
    kubectlCatalog()
      .filter((e) => e.subcommand === undefined)
      .map((e) => [e.verb, e.category]),
  );

describe('kubectl verb categories', () => {
  it('classifies exactly the mutating verbs kubectl has as mutations', () => {
    const mutations = Object.entries(bare())
      .filter(([, category]) => category === 'mutate')
      .map(([verb]) => verb)
      .sort();
    expect(mutations).toEqual(
      [
        'apply',
        'create',
        'delete',
        'edit',
        'patch',
        'replace',
        'scale',
        'autoscale',
        'label',
        'annotate',
        'set',
        'expose',
        'run',
        'cordon',
        'uncordon',
        'drain',
        'taint',
        'certificate',
      ].sort(),
    );
  });

  it('gives every verb of the parser a category, and only the command group alpha none of its own', () => {
    const categories = bare();
    const missing = [...KUBECTL_VERBS].filter(
      (v) => categories[v] === undefined || categories[v] === 'unknown',
    );
    expect(missing).toEqual(['alpha']);
    expect(categories.exec).toBe('workload-access');
    expect(categories.get).toBe('read');
  });
});
