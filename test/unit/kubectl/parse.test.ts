import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitCommandLine } from '../../../src/kubectl/parse.js';
import { classifyKubectl, type KubectlCategory } from '../../../src/kubectl/policy/classify.js';
import { findResourceType } from '../../../src/kubectl/resources.js';

const parse = (line: string) => {
  const argv = splitCommandLine(line);
  if (!argv) throw new Error(`bad test line ${line}`);
  return classifyKubectl(argv);
};

describe('parseKubectl: flag forms normalise to one text', () => {
  const same: [string, string[]][] = [
    [
      'get pods --namespace=payments --output=json',
      [
        'get pods -n payments -o json',
        'get pods -npayments -ojson',
        'get pods -n=payments -o=json',
        '-n payments get pods --output json',
        'get --output=json pods --namespace payments',
        'get po -n payments -o JSON',
        'get pod -o json -n payments',
      ],
    ],
    [
      'get pods --all-namespaces --output=wide',
      [
        'get pods -A -o wide',
        'get pods -Ao wide',
        'get -Aowide pods',
        'get pods --all-namespaces=true -owide',
      ],
    ],
    [
      'get pods/api-1 --namespace=shop',
      ['get pod api-1 -n shop', 'get po/api-1 -n shop', 'get pods api-1 --namespace=shop'],
    ],
    [
      'get deployments,replicasets --namespace=shop',
      ['get deploy,rs -n shop', 'get deployments.apps,rs -n shop', 'get deployment,replicaset.apps -n shop'],
    ],
    [
      "get pods '--output=jsonpath={.items[*].metadata.name}' --selector=app=api",
      [
        "get pods -l app=api -o jsonpath='{.items[*].metadata.name}'",
        "get pods --selector app=api -o=jsonpath='{.items[*].metadata.name}'",
      ],
    ],
    [
      'logs pods/api-1 --container=api --namespace=shop --previous --tail=50',
      ['logs api-1 -c api -n shop -p --tail 50', 'logs pod/api-1 --previous --tail=50 -n shop -capi'],
    ],
  ];
  it.each(same)('%s', (expected, forms) => {
    for (const form of forms) expect(parse(form).normalized, form).toBe(expected);
  });
});

describe('parseKubectl: fields', () => {
  it('reads namespace, output, selector and targets whatever the order', () => {
    const cmd = parse('-n shop get -l app=api pods -o=yaml --field-selector status.phase=Pending');
    expect(cmd).toMatchObject({
      verb: 'get',
      namespace: 'shop',
      output: 'yaml',
      selector: 'app=api',
      allNamespaces: false,
      flags: { 'field-selector': 'status.phase=Pending' },
    });
    expect(cmd.targets).toEqual([expect.objectContaining({ text: 'pods', names: [] })]);
    expect(cmd.targets[0]?.type?.kind).toBe('Pod');
  });

  it('keeps several type/name targets and unknown types without a type', () => {
    const cmd = parse('get pod/a deploy/b pod/c frobs/x');
    expect(cmd.targets.map((t) => [t.text, t.type?.name, t.names])).toEqual([
      ['pod', 'pods', ['a', 'c']],
      ['deploy', 'deployments', ['b']],
      ['frobs', undefined, ['x']],
    ]);
  });

  it('gives logs -f and -p their logs meaning, and -f its filename meaning elsewhere', () => {
    expect(parse('logs -f -p api-1').flags).toMatchObject({ follow: 'true', previous: 'true' });
    expect(parse('apply -f deploy.yaml').flags).toMatchObject({ filename: 'deploy.yaml' });
    expect(parse(`patch deploy api -p '{"spec":{}}'`).flags).toMatchObject({ patch: '{"spec":{}}' });
  });

  it('reads --raw as a path for get and a switch for config view', () => {
    expect(parse('get --raw /readyz?verbose').raw).toEqual({ method: 'GET', path: '/readyz?verbose' });
    expect(parse('config view --raw').flags.raw).toBe('true');
  });

  it('keeps what follows -- as the command of exec', () => {
    const cmd = parse('exec -it api-1 -c api -- sh -c "cat /etc/config"');
    expect(cmd.afterDashDash).toEqual(['sh', '-c', 'cat /etc/config']);
    expect(cmd.flags).toMatchObject({ stdin: 'true', tty: 'true', container: 'api' });
    expect(cmd.targets[0]?.names).toEqual(['api-1']);
  });

  it('reads the words after -- as resources, as pflag does for every verb that runs no command', () => {
    expect(parse('get -o yaml -- secrets')).toMatchObject({
      targets: [{ text: 'secrets', names: [] }],
      afterDashDash: [],
      normalized: 'get secrets --output=yaml',
    });
    expect(parse('get -- pods').normalized).toBe(parse('get pods').normalized);
    expect(parse('get pods -- web-1').targets).toEqual([
      expect.objectContaining({ text: 'pods', names: ['web-1'] }),
    ]);
    expect(parse('wait --for=delete -- secret/x').targets[0]).toMatchObject({ text: 'secret', names: ['x'] });
    expect(parse('logs -- web-1 app')).toMatchObject({ targets: [{ names: ['web-1'] }], args: ['app'] });
    expect(parse('top pod -- web-1')).toMatchObject({ subcommand: 'pod', targets: [{ names: ['web-1'] }] });
  });

  it('finds a subcommand only before --, where cobra looks for it', () => {
    expect(parse('rollout -- status deploy/api')).toMatchObject({
      verb: 'rollout',
      args: ['status', 'deploy/api'],
      normalized: 'rollout -- status deploy/api',
    });
    expect(parse('rollout status -- deploy/api')).toMatchObject({
      subcommand: 'status',
      targets: [{ text: 'deploy', names: ['api'] }],
    });
    expect(parse('-- get secrets')).toMatchObject({ args: ['get', 'secrets'], normalized: '-- get secrets' });
    expect(parse('-- get secrets').verb).toBeUndefined();
  });

  it('keeps the command after -- of create job, as kubectl reads NAME before it', () => {
    expect(parse('create job probe --image=busybox -- wget -q x')).toMatchObject({
      subcommand: 'job',
      targets: [{ text: 'jobs', names: ['probe'] }],
      afterDashDash: ['wget', '-q', 'x'],
    });
  });

  it('names the plugin kubectl would look for', () => {
    expect(parse('neat get pod x')).toMatchObject({ plugin: 'kubectl-neat', category: 'unknown' });
  });

  it('reports kubectl usage errors with its wording', () => {
    expect(parse('get pods --frobnicate').error).toBe('unknown flag: --frobnicate');
    expect(parse('get pods -z').error).toBe("unknown shorthand flag: 'z' in -z");
    expect(parse('get pods -n').error).toBe("flag needs an argument: 'n' in -n");
    expect(parse('get pods --namespace').error).toBe('flag needs an argument: --namespace');
    expect(parse('get pods -A=maybe').error).toContain('invalid argument "maybe" for "-A" flag');
  });

  it('understands subcommands: top, rollout, create, set, auth', () => {
    expect(parse('top po -n shop')).toMatchObject({ subcommand: 'pod', category: 'read' });
    expect(parse('rollout status deploy/api')).toMatchObject({ subcommand: 'status', category: 'read' });
    expect(parse('create secret generic db --from-literal=password=x')).toMatchObject({
      subcommand: 'secret',
      category: 'mutate',
    });
    expect(parse('create secret generic db').targets[0]).toMatchObject({ text: 'secrets', names: ['db'] });
    const set = parse('set image deploy/api api=registry/api:2');
    expect(set).toMatchObject({ subcommand: 'image', args: ['api=registry/api:2'], category: 'mutate' });
    expect(set.targets[0]?.names).toEqual(['api']);
    expect(parse('auth can-i delete pods')).toMatchObject({ subcommand: 'can-i', args: ['delete', 'pods'] });
  });
});

describe('parseKubectl: classification', () => {
  const cases: [string, KubectlCategory, boolean][] = [
    ['get pods -A', 'read', true],
    ['describe pod api-1 -n shop', 'read', true],
    ['logs deploy/api --tail=20', 'read', true],
    ['events --for pod/api-1', 'read', true],
    ['top nodes', 'read', true],
    ['rollout history deploy/api', 'read', true],
    ['auth can-i get pods', 'read', true],
    ['config current-context', 'read', true],
    ['api-resources', 'read', true],
    ['version', 'read', true],
    ['', 'read', true],
    ['get secrets -n shop', 'secret-read', false],
    ['get secret db -o name', 'secret-read', false],
    ['describe secret db', 'secret-read', false],
    ['describe sa default', 'secret-read', false],
    ['get secret db -o yaml', 'secret-read', false],
    ["get secret db -o jsonpath='{.data.password}'", 'secret-read', false],
    ['get configmaps,secrets -o json', 'secret-read', false],
    ["get secret db --template='{{.data}}'", 'secret-read', false],
    ['config view --raw', 'secret-read', false],
    ['get --raw /api/v1/namespaces/shop/secrets/db', 'secret-read', false],
    ['get --raw /api/v1/namespaces/shop/pods', 'raw', true],
    ['get --raw /api/v1/namespaces/shop/services/api:80/proxy/admin/flush', 'workload-access', false],
    ['get --raw /api/v1/nodes/node-1/proxy/logs/', 'workload-access', false],
    ['get --raw /api/v1/namespaces/shop/pods/api-1/proxy?x=1', 'workload-access', false],
    ['get --raw /api/v1/proxy/namespaces/shop/services/api/', 'workload-access', false],
    ['get --raw /api/v1/namespaces/proxy/pods', 'raw', true],
    ['create --raw /api/v1/namespaces/shop/pods -f pod.json', 'raw', false],
    ['delete --raw /api/v1/namespaces/shop/pods/x', 'raw', false],
    ['replace --raw /api/v1/namespaces/shop/pods/x -f pod.json', 'raw', false],
    ['delete pod api-1', 'mutate', false],
    ['apply -f x.yaml', 'mutate', false],
    ['apply view-last-applied deploy/api', 'read', true],
    ['scale deploy/api --replicas=0', 'mutate', false],
    ['rollout restart deploy/api', 'mutate', false],
    ['rollout undo deploy/api', 'mutate', false],
    ['set env deploy/api A=b', 'mutate', false],
    ['label pod x a=b', 'mutate', false],
    ['cordon node-1', 'mutate', false],
    ['drain node-1 --ignore-daemonsets', 'mutate', false],
    ['taint nodes node-1 key=value:NoSchedule', 'mutate', false],
    ['edit deploy api', 'mutate', false],
    ['config use-context other', 'mutate', false],
    ['create token default', 'mutate', false],
    ['exec api-1 -- ls', 'workload-access', false],
    ['attach api-1', 'workload-access', false],
    ['port-forward svc/api 8080:80', 'workload-access', false],
    ['cp shop/api-1:/etc/passwd ./passwd', 'workload-access', false],
    ['debug node/node-1 -it --image=busybox', 'workload-access', false],
    ['proxy', 'workload-access', false],
    ['frobnicate pods', 'unknown', false],
    ['get pods --bogus', 'unknown', false],
    ['rollout frob deploy/x', 'unknown', false],
  ];
  it.each(cases)('%s → %s', (line, category, readOnly) => {
    const cmd = parse(line);
    expect({ category: cmd.category, readOnly: cmd.readOnly }).toEqual({ category, readOnly });
    expect(cmd.reason).not.toBe('');
  });

  it('names the write target of a cp whichever side the pod is on', () => {
    expect(parse('cp ./local shop/api-1:/tmp/x').targets[0]?.names).toEqual(['api-1']);
  });
});

describe('findResourceType', () => {
  it.each([
    ['po', 'pods'],
    ['Pod', 'pods'],
    ['deployments.apps', 'deployments'],
    ['deployments.v1.apps', 'deployments'],
    ['pvc', 'persistentvolumeclaims'],
    ['sc', 'storageclasses'],
    ['ev', 'events'],
    ['hpa', 'horizontalpodautoscalers'],
  ])('%s → %s', (text, name) => {
    expect(findResourceType(text)?.name).toBe(name);
  });

  it('refuses a type qualified with the wrong group', () => {
    expect(findResourceType('deployments.batch')).toBeUndefined();
    expect(findResourceType('frobs')).toBeUndefined();
  });
});

describe('splitCommandLine', () => {
  it('splits like a POSIX shell', () => {
    expect(splitCommandLine(`get pods -o jsonpath='{.items[*]}' "a b" c\\ d`)).toEqual([
      'get',
      'pods',
      '-o',
      'jsonpath={.items[*]}',
      'a b',
      'c d',
    ]);
    expect(splitCommandLine(`get "unterminated`)).toBeUndefined();
  });

  it('splits every line as the character-at-a-time reading does (quotes, escapes, any whitespace)', () => {
    // The reading it replaced, kept as the oracle: one character at a time.
    const oneByOne = (line: string): string[] | undefined => {
      const words: string[] = [];
      let word = '';
      let inWord = false;
      let quote: '"' | "'" | undefined;
      for (let i = 0; i < line.length; i++) {
        const c = line[i] as string;
        if (quote === "'") {
          if (c === "'") quote = undefined;
          else word += c;
        } else if (quote === '"') {
          if (c === '"') quote = undefined;
          else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string))
            word += line[++i];
          else word += c;
        } else if (c === "'" || c === '"') {
          quote = c;
          inWord = true;
        } else if (c === '\\' && i + 1 < line.length) {
          word += line[++i];
          inWord = true;
        } else if (/\s/.test(c)) {
          if (inWord) words.push(word);
          word = '';
          inWord = false;
        } else {
          word += c;
          inWord = true;
        }
      }
      if (quote) return undefined;
      if (inWord) words.push(word);
      return words;
    };
    const alphabet = [
      'a',
      'pod',
      ' ',
      '  ',
      '\t',
      '\n',
      '\u00a0',
      '\u2003',
      "'",
      '"',
      '\\',
      '$',
      '`',
      '-n',
      '=',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }), (parts) => {
        const line = parts.join('');
        expect(splitCommandLine(line)).toEqual(oneByOne(line));
      }),
      { numRuns: 2000, seed: 41 },
    );
    expect(splitCommandLine(`a\\`)).toEqual(['a\\']);
    expect(splitCommandLine(`"x\\y\\"z"`)).toEqual(['x\\y"z']);
  });
});
