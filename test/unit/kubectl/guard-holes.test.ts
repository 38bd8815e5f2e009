import { describe, expect, it } from 'vitest';
import { commandPath } from '../../../src/kubectl/policy/command-path.js';
import { canonicalRawPath } from '../../../src/kubectl/policy/classify.js';
import { decideCall } from '../../../src/kubectl/policy/decide.js';
import { compilePolicy, DEFAULT_HELPERS } from '../../../src/kubectl/policy/policy.js';
import { splitCommandLine } from '../../../src/kubectl/parse.js';

// The calls that got past the guard as a hostile agent wrote them, under the shipped read-only policy:
// each is refused now, and the spellings an honest agent uses are still allowed.

const policy = compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in');
const call = (line: string) => decideCall({ argv: splitCommandLine(line) ?? [] }, policy);

describe('guard: the command kubectl would run is the one decided on', () => {
  it.each([
    ['-A events delete --all', 'delete'],
    ['--cascade events delete evidence-1 -n payments', 'delete'],
    ['-R events label --all pwned=1', 'label'],
    ['-w pods delete x', 'delete'],
    ['--all-namespaces events delete --all', 'delete'],
    ['-o events delete x', 'delete'],
  ])('`kubectl %s` runs `%s` in kubectl, so it is refused', (line, verb) => {
    expect(commandPath(splitCommandLine(line) ?? []).path).toEqual([verb]);
    const d = call(line);
    expect(d.allowed, line).toBe(false);
    expect(d.rule).toBe('guard: flag before the command');
    expect(d.message).toMatch(/before the command, where kubectl would take the next word as its value/);
  });

  it('refuses flags between a verb and its subcommand that kubectl would read differently', () => {
    expect(commandPath(['rollout', '-R', 'status', 'restart', 'deploy/x']).path).toEqual([
      'rollout',
      'restart',
    ]);
    expect(call('rollout -R status restart deploy/x').allowed).toBe(false);
    expect(call('auth --all can-i reconcile').allowed).toBe(false);
  });

  it('allows kubectl global flags before the command and any flag after it', () => {
    for (const line of [
      '-n payments get events',
      '--namespace=payments get pods -A',
      '-npayments get pods',
      '-v 4 get pods',
      '--request-timeout 5s get pods -o wide',
      'get events -A --sort-by .lastTimestamp',
      '-n shop rollout status deploy/api',
      'rollout status -n shop deploy/api',
      'top pods -A',
      'logs -f -p api-1 -n shop',
    ]) {
      expect(call(line), line).toMatchObject({ allowed: true });
    }
  });

  it('finds the command as cobra does: a flag it does not know swallows the next word, a switch does not', () => {
    expect(commandPath(['--match-server-version', 'get', 'pods']).path).toEqual(['get']);
    expect(commandPath(['-n', 'get', 'delete', 'x']).path).toEqual(['delete']);
    expect(commandPath(['-n', 'get']).path).toEqual([]);
    expect(commandPath(['--', 'delete', 'pods']).path).toEqual([]);
    expect(commandPath(['top', 'po']).path).toEqual(['top', 'pod']);
    expect(commandPath(['create', 'secret', 'generic', 'x']).path).toEqual(['create', 'secret']);
  });
});

describe('guard: -- ends the flags, not the resources', () => {
  it.each([
    'get -o yaml -- secrets',
    'get -A -- secrets',
    'get -- secrets -o yaml',
    'get pods,secrets -- -o',
    'wait --for=delete --timeout=1s -- secret/x',
    'describe -- sa',
    'describe -- secrets',
    'describe sa -- default',
    'logs -- secret/x',
    'rollout status -- secret/x',
    'apply view-last-applied -- secret/x',
  ])('refuses `kubectl %s`: kubectl reads the words after -- as the resources', (line) => {
    const d = call(line);
    expect(d, line).toMatchObject({ allowed: false, rule: 'exclude "kubectl @secret-read"' });
  });

  it('still allows the reads an agent writes with --', () => {
    for (const line of [
      'get -- pods',
      'get pods -n payments -- web-1',
      'logs -n payments -- web-1 app',
      'top pod -- web-1',
    ])
      expect(call(line), line).toMatchObject({ allowed: true, rule: 'include "kubectl @read"' });
    // `explain` reads the schema, never an object: naming Secrets there fetches none.
    expect(call('explain -- secrets').allowed).toBe(true);
  });
});

describe('guard: credentials, encodings and verbosity', () => {
  it.each(['config view --flatten', 'config view --raw', 'config view', 'config view --minify -o json'])(
    'refuses `kubectl %s`: it prints the daemon kubeconfig',
    (line) => {
      const d = call(line);
      expect(d.allowed).toBe(false);
      expect(d.command.category).toBe('secret-read');
    },
  );

  it.each([
    'get --raw /api/v1/namespaces/payments/%73ecrets',
    'get --raw /api/v1/namespaces/payments/%2573ecrets',
    'get --raw /api/v1/namespaces/payments/SECRETS/x',
    'get --raw /api/v1/namespaces/payments/pods/../secrets',
    'get --raw /api/v1//secrets',
    'get --raw /api/v1/namespaces/payments/pods/x/%70roxy/',
    'get --raw /api/v1/namespaces/payments/pods/x/proxy',
    'get --raw /api/v1/namespaces/payments/services/x/%2570roxy/admin',
    'get --raw /api/v1/namespaces/payments/pods/x/exec?command=id',
    'get --raw /api/v1/namespaces/payments/pods/%ZZ',
  ])('refuses `kubectl %s` after decoding the path as the API server will', (line) => {
    expect(call(line).allowed, line).toBe(false);
  });

  it('still allows a plain raw read', () => {
    expect(call('get --raw /api/v1/namespaces/payments/pods?limit=5').allowed).toBe(true);
    expect(canonicalRawPath('/api/v1/namespaces/a/pods/./b/../%63')).toBe('/api/v1/namespaces/a/pods/c');
  });

  it('refuses --vmodule, which gets around the verbosity cap', () => {
    for (const line of ['get pods --vmodule=*=9', '--vmodule *=9 get pods', 'get pods --vmodule=x=1']) {
      expect(call(line), line).toMatchObject({ allowed: false, rule: 'guard: --vmodule' });
    }
  });
});
