import { describe, expect, it } from 'vitest';
import { decideCall } from '../../../src/kubectl/policy/decide.js';
import { splitCommandLine } from '../../../src/kubectl/parse.js';
import { compilePolicy, parseHelpers } from '../../../src/kubectl/policy/policy.js';

// A policy that allows every kubectl call: what is still refused is the guard's own rule.
const everything = compilePolicy(parseHelpers("include: ['kubectl *']\n", 'h.yaml'), 'open', 'h.yaml');
const call = (line: string, kubeconfig?: string) =>
  decideCall(
    { argv: splitCommandLine(line) ?? [], ...(kubeconfig !== undefined ? { kubeconfig } : {}) },
    everything,
  );

describe('decideCall: rules no persona can lift', () => {
  it('allows a plain call under an open policy', () => {
    expect(call('get pods -n shop')).toMatchObject({ allowed: true, rule: 'include "kubectl *"' });
  });

  it('refuses a call made with KUBECONFIG set, naming the variable and what to do', () => {
    const d = call('get pods', '/tmp/x');
    expect(d).toMatchObject({ allowed: false, rule: 'guard: KUBECONFIG' });
    expect(d.message).toBe(
      'kubectl guard: refused `kubectl get pods`: KUBECONFIG is set to "/tmp/x"; this kubectl always uses the cluster access the daemon holds. Unset KUBECONFIG and run the command again',
    );
    expect(call('get pods', '').allowed).toBe(true);
  });

  it.each([
    ['get pods --kubeconfig /tmp/x', 'guard: --kubeconfig'],
    ['get pods --context other', 'guard: --context'],
    ['--cluster other get pods', 'guard: --cluster'],
    ['get pods --user admin', 'guard: --user'],
    ['get pods -s https://evil.example', 'guard: --server'],
    ['get pods --server=https://evil.example', 'guard: --server'],
    ['get pods --as system:admin', 'guard: --as'],
    ['get pods --as-group system:masters', 'guard: --as-group'],
    ['get pods --insecure-skip-tls-verify', 'guard: --insecure-skip-tls-verify'],
    ['get pods --certificate-authority /tmp/ca', 'guard: --certificate-authority'],
    ['get -f /etc/passwd', 'guard: --filename'],
    ['get -k ./dir', 'guard: --kustomize'],
    ['get pods --cache-dir /tmp/c', 'guard: --cache-dir'],
    ['get pods --profile cpu --profile-output /tmp/p', 'guard: --profile'],
    ['cluster-info dump --output-directory /etc/cron.d', 'guard: --output-directory'],
    ['create configmap x --from-file /etc/shadow', 'guard: --from-file'],
    ['get pods -o go-template-file=/etc/shadow', 'guard: -o file'],
    ['get pods -o jsonpath-file=/etc/shadow', 'guard: -o file'],
    ['kustomize ./overlay', 'guard: kustomize'],
    ['get pods -v=9', 'guard: -v'],
    ['get pods --v x', 'guard: -v'],
    ['krew install foo', 'guard: plugin'],
    ['get pods --no-such-flag', 'guard: unreadable'],
    ['get --raw /api/v1/namespaces/shop/pods/x -X DELETE', 'guard: unreadable'],
  ])('refuses `kubectl %s` (%s)', (line, rule) => {
    const d = call(line);
    expect(d).toMatchObject({ allowed: false, rule });
    expect(d.message).toMatch(/^kubectl guard: refused `kubectl .*`: /);
  });

  it('never shows a token given on the command line', () => {
    const d = call('get pods --token sekrit-token-value --server https://x');
    expect(d.allowed).toBe(false);
    expect(d.shown).toContain('[REDACTED]');
    expect(JSON.stringify(d.shown) + (d.message ?? '')).not.toContain('sekrit-token-value');
  });

  it('keeps -f as --follow for logs, which reads no file', () => {
    expect(call('logs web-1 -f -n shop').allowed).toBe(true);
  });

  it('allows verbosity up to -v=5 and refuses -v=6 and above, which print the daemon-side kubeconfig path', () => {
    for (const line of ['get pods -v=5', 'get pods -v 4', '-v=0 get pods', 'get pods --v=-1'])
      expect(call(line).allowed, line).toBe(true);
    for (const line of [
      'get pods -v=6',
      'get pods -v6',
      '--v=9 get pods',
      'get pods -v 06',
      'get pods -v=+7',
    ]) {
      const d = call(line);
      expect(d, line).toMatchObject({ allowed: false, rule: 'guard: -v' });
      expect(d.message).toMatch(/the path of the daemon's kubeconfig .*run it again with -v=5 or less/);
    }
  });
});

describe('decideCall: the persona policy', () => {
  const readOnly = compilePolicy(
    parseHelpers("include: ['kubectl @read']\nexclude: ['kubectl @secret-read']\n", 'h.yaml'),
    'sre',
    'h.yaml',
  );

  it('says which rule refused and that the command was not run', () => {
    const d = decideCall({ argv: ['delete', 'pod', 'web-1', '-n', 'shop'] }, readOnly);
    expect(d).toMatchObject({
      allowed: false,
      rule: 'no include pattern',
      shown: 'delete pods/web-1 --namespace=shop',
    });
    expect(d.message).toBe(
      "kubectl guard: refused `kubectl delete pods/web-1 --namespace=shop`: nothing in the sre persona's tool policy allows verb delete. It was not run; if it is needed, put it in your report as a recommendation",
    );
    const secret = decideCall({ argv: ['get', 'secret', 'db', '-o', 'yaml'] }, readOnly);
    expect(secret.rule).toBe('exclude "kubectl @secret-read"');
    expect(secret.message).toContain('refuses Secret data via -o yaml');
  });
});
