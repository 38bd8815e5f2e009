import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deniedCommands, toolPermissions } from '../../../src/kubectl/policy/permissions.js';
import { compilePolicy, loadToolPolicy, parseHelpers } from '../../../src/kubectl/policy/policy.js';
import { REPO_ROOT } from '../../support/runs.js';

const shipped = () => loadToolPolicy(path.join(REPO_ROOT, 'configs/personas'), 'kubernetes-sre');
const words = (list: string[][]) => list.map((w) => w.join(' '));

describe('toolPermissions of the shipped kubernetes-sre persona', () => {
  it('refuses every mutating verb, workload access and state-changing helm by command prefix', async () => {
    const denied = words(toolPermissions(await shipped()).deniedCommands);
    for (const prefix of [
      'kubectl delete',
      'kubectl apply',
      'kubectl create',
      'kubectl patch',
      'kubectl scale',
      'kubectl edit',
      'kubectl exec',
      'kubectl attach',
      'kubectl cp',
      'kubectl port-forward',
      'kubectl debug',
      'kubectl rollout undo',
      'kubectl rollout restart',
      'kubectl config use-context',
      'helm install',
      'helm upgrade',
      'helm uninstall',
      'helm rollback',
    ]) {
      expect(denied).toContain(prefix);
    }
  });

  it('leaves the read verbs to the agent', async () => {
    const denied = words(toolPermissions(await shipped()).deniedCommands);
    for (const prefix of [
      'kubectl get',
      'kubectl describe',
      'kubectl logs',
      'kubectl rollout',
      'kubectl top',
      'kubectl auth',
    ])
      expect(denied).not.toContain(prefix);
    expect(denied.filter((d) => d.startsWith('kubectl rollout'))).toEqual([
      'kubectl rollout undo',
      'kubectl rollout restart',
      'kubectl rollout pause',
      'kubectl rollout resume',
    ]);
  });

  it('names the allowed and denied built-in tools', async () => {
    const p = toolPermissions(await shipped());
    expect(p).toMatchObject({
      persona: 'kubernetes-sre',
      allowedTools: ['shell', 'read', 'write', 'edit', 'search', 'todo', 'skill', 'schedule', 'workflow'],
      deniedTools: ['web', 'subagent'],
    });
  });
});

describe('deniedCommands', () => {
  const policy = (yaml: string) => compilePolicy(parseHelpers(yaml, 'h.yaml'), 'p', 'h.yaml');

  it('turns literal excludes into prefixes and keeps only the shortest prefix', () => {
    const p = policy(
      "include: ['kubectl *']\nexclude: ['helm', 'helm install', 'kubectl get secrets', 'kubectl --raw POST']\n",
    );
    // No include names promql: the CLI refuses it too.
    expect(words(deniedCommands(p))).toEqual(['promql', 'helm', 'kubectl get secrets']);
  });

  it('refuses promql as the persona does: none of it, one subcommand, or all of it', async () => {
    expect(
      words(toolPermissions(await shipped()).deniedCommands).filter((w) => w.startsWith('promql')),
    ).toEqual([]);
    const some = policy("include: ['promql @read']\nexclude: ['promql series', 'promql labels']\n");
    expect(words(deniedCommands(some)).filter((w) => w.startsWith('promql'))).toEqual([
      'promql series',
      'promql labels',
    ]);
    const none = policy("include: ['kubectl @read']\nexclude: ['promql']\n");
    expect(words(deniedCommands(none)).filter((w) => w.startsWith('promql'))).toEqual(['promql']);
  });

  it('refuses every kubectl verb when no include names kubectl', () => {
    const denied = words(deniedCommands(policy("include: ['tool:*']\n")));
    expect(denied).toContain('kubectl get');
    expect(denied).toContain('kubectl delete');
    expect(denied).not.toContain('kubectl rollout status');
  });
});
