import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideCall } from '../../../src/kubectl/policy/decide.js';
import { splitCommandLine } from '../../../src/kubectl/parse.js';
import {
  DEFAULT_HELPERS,
  ToolPolicyError,
  compilePolicy,
  decide,
  loadToolPolicy,
  parseHelpers,
  toolAllowed,
  type ToolPolicy,
} from '../../../src/kubectl/policy/policy.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

const PERSONAS = path.join(REPO_ROOT, 'configs/personas');

const argv = (line: string): string[] => {
  const words = splitCommandLine(line);
  if (!words) throw new Error(`bad test line ${line}`);
  return words;
};
const allowed = (policy: ToolPolicy, line: string) => decideCall({ argv: argv(line) }, policy).allowed;

/** What the issue asks of the shipped persona: read verbs pass, the rest is refused. */
const READS = [
  'get pods -n shop',
  'get pods -A -o wide',
  'describe pod web-1 -n shop',
  'logs web-1 -n shop --previous --tail=50',
  'get events -n shop --sort-by=.lastTimestamp',
  'top pod -n shop',
  'rollout history deployment/web -n shop',
  'rollout status deployment/web -n shop',
  'auth can-i list pods',
  'get --raw /api/v1/namespaces/shop/pods',
  'config current-context',
  'api-resources',
];
const REFUSED = [
  'delete pod web-1 -n shop',
  'apply -f deploy.yaml',
  'scale deployment web --replicas=0 -n shop',
  'rollout undo deployment/web -n shop',
  'rollout restart deployment/web',
  'patch deployment web -p {}',
  'label pod web-1 x=y',
  'cordon node-1',
  'drain node-1',
  'exec web-1 -n shop -- sh',
  'attach web-1 -n shop',
  'cp web-1:/etc/passwd ./passwd',
  'port-forward web-1 8080:80',
  'debug web-1 -it --image=busybox',
  'proxy',
  'get secret db -n shop -o yaml',
  'get secrets -n shop',
  'describe secret db -n shop',
  'describe serviceaccount default -n shop',
  'config view',
  'config view --flatten',
  'get secrets -o jsonpath={.items[0].data}',
  'config view --raw',
  'config use-context other',
  'create --raw /api/v1/namespaces/shop/pods',
  'delete --raw /api/v1/namespaces/shop/pods/web-1',
  'replace --raw /api/v1/namespaces/shop/pods/web-1',
  'get --raw /api/v1/namespaces/shop/secrets/db',
  'alpha events',
];

describe('the shipped kubernetes-sre tool policy', () => {
  it('allows the read verbs and refuses mutations, workload access, Secret data and unknown commands', async () => {
    const policy = await loadToolPolicy(PERSONAS, 'kubernetes-sre');
    expect(policy.source).toBe(path.join(PERSONAS, 'kubernetes-sre', 'helpers.yaml'));
    expect(READS.filter((l) => !allowed(policy, l))).toEqual([]);
    expect(REFUSED.filter((l) => allowed(policy, l))).toEqual([]);
  });

  it('gives the CLI its file, shell, search, todo and skill tools but not web access or subagents', async () => {
    const policy = await loadToolPolicy(PERSONAS, 'kubernetes-sre');
    expect(
      ['shell', 'read', 'write', 'edit', 'search', 'todo', 'skill'].every((t) =>
        toolAllowed(policy, t as never),
      ),
    ).toBe(true);
    expect(toolAllowed(policy, 'web')).toBe(false);
    expect(toolAllowed(policy, 'subagent')).toBe(false);
  });

  it('is what a persona without helpers.yaml gets', async () => {
    const root = await tempDir('triage-policy-');
    try {
      const builtIn = await loadToolPolicy(root.dir, 'no-such-file');
      const shipped = await loadToolPolicy(PERSONAS, 'kubernetes-sre');
      expect(builtIn.source).toBe('built-in');
      for (const line of [...READS, ...REFUSED])
        expect([line, allowed(builtIn, line)]).toEqual([line, allowed(shipped, line)]);
      for (const name of ['helm install', 'helm upgrade', 'helm list', 'tool:web', 'tool:shell']) {
        expect([name, decide(builtIn, [name]).allowed]).toEqual([name, decide(shipped, [name]).allowed]);
      }
    } finally {
      await root.cleanup();
    }
  });
});

describe('helpers.yaml rules', () => {
  const policy = (yaml: string) => compilePolicy(parseHelpers(yaml, 'helpers.yaml'), 'p', 'helpers.yaml');

  it('lets exclude win over include and refuses what no include names', () => {
    const p = policy("include: ['kubectl *']\nexclude: ['kubectl delete']\n");
    expect(decide(p, ['kubectl get', 'kubectl @read'])).toEqual({
      allowed: true,
      rule: 'include "kubectl *"',
    });
    expect(decide(p, ['kubectl delete', 'kubectl @mutate'])).toEqual({
      allowed: false,
      rule: 'exclude "kubectl delete"',
    });
    expect(decide(p, ['helm list'])).toEqual({ allowed: false, rule: 'no include pattern' });
  });

  it('expands a category name into its patterns', () => {
    const p = policy(
      "categories:\n  reads: { patterns: ['kubectl @read'] }\ninclude: [reads]\nexclude: ['kubectl get secrets']\n",
    );
    expect(decide(p, ['kubectl describe', 'kubectl @read']).rule).toBe('include "reads"');
    expect(allowed(p, 'get secrets -n shop')).toBe(false);
    expect(allowed(p, 'get pods -n shop')).toBe(true);
  });

  it('names resource types, so a persona can refuse one type of a read verb', () => {
    const p = policy("include: ['kubectl @read']\nexclude: ['kubectl * configmaps']\n");
    expect(allowed(p, 'get cm -n shop')).toBe(false);
    expect(allowed(p, 'describe configmap app -n shop')).toBe(false);
    expect(allowed(p, 'get pods -n shop')).toBe(true);
  });

  it('reports a YAML error with its line and column', () => {
    expect(() => parseHelpers('include: [a\nexclude: b\n', '/p/helpers.yaml')).toThrow(
      /^\/p\/helpers\.yaml:\d+:\d+: .*fix the YAML$/,
    );
  });

  it('reports every schema problem with its path, and an unknown key', () => {
    const err = (() => {
      try {
        parseHelpers("include: ['']\nexclude: 3\nallow: []\n", '/p/helpers.yaml');
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ToolPolicyError);
    expect(err?.message).toContain('include.0: a pattern cannot be empty');
    expect(err?.message).toContain('exclude:');
    expect(err?.message).toMatch(/allow/);
    expect(err?.message).toContain('Expected keys: categories, include, exclude');
  });

  it('refuses a tool pattern that names no tool', () => {
    expect(() => parseHelpers("include: ['tool:browser']\n", 'h.yaml')).toThrow(
      'h.yaml: pattern "tool:browser" names no tool; the tools are tool:shell',
    );
  });

  it('rejects an alias bomb instead of expanding it', () => {
    // Each level refers ten times to the one before: 10^9 entries if expanded.
    const levels = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i <= 8; i++)
      levels.push(
        `l${i}: &l${i} [${Array(10)
          .fill(`*l${i - 1}`)
          .join(', ')}]`,
      );
    expect(() => parseHelpers(levels.join('\n'), 'h.yaml')).toThrow(/^h\.yaml was rejected: .*fix the YAML$/);
  });

  it('reads the shipped file into the same patterns DEFAULT_HELPERS holds', async () => {
    const file = path.join(PERSONAS, 'kubernetes-sre', 'helpers.yaml');
    const parsed = parseHelpers(await readFile(file, 'utf8'), file);
    const expand = (entries: string[]) =>
      entries.flatMap((e) => parsed.categories[e]?.patterns ?? [e]).sort();
    expect(expand(parsed.include)).toEqual([...DEFAULT_HELPERS.include].sort());
    expect(expand(parsed.exclude)).toEqual([...DEFAULT_HELPERS.exclude].sort());
  });
});
