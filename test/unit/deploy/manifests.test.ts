import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { configSchema } from '../../../src/config/schema.js';
import { buildJob } from '../../../src/engines/kubernetes/index.js';
import type { RunSpec } from '../../../src/engines/types.js';
import { launchWithPodToken, POD_TOKEN_ENV } from '../../../src/gateway/pod-route.js';
import { exposureProblem } from '../../../src/server/exposure.js';
import { readManifests, renderKustomization, type K8sObject } from '../../support/kustomize.js';

// Every manifest in deploy/kubernetes is rendered (a small kustomize subset, test/support/kustomize.ts)
// and validated against the Kubernetes OpenAPI schemas compiled into kubernetes-models (offline), then
// checked for the properties the deployment promises: least privilege, hardening, probes, wiring.

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BASE = path.join(ROOT, 'deploy/kubernetes');

/** The kubernetes-models class for an object's apiVersion + kind; unknown kinds fail the test. */
async function modelFor(o: K8sObject): Promise<new (data: unknown) => { validate(): void }> {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const specifier =
    group === 'monitoring.coreos.com'
      ? `@kubernetes-models/prometheus-operator/${group}/${version}/${o.kind}`
      : `kubernetes-models/${group ? `${group}/` : ''}${version}/${o.kind}`;
  const mod = (await import(specifier)) as Record<string, new (data: unknown) => { validate(): void }>;
  const model = mod[o.kind];
  if (!model) throw new Error(`no schema model for ${o.apiVersion} ${o.kind} (${specifier})`);
  return model;
}

async function validateAll(objects: K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const o of objects) {
    const Model = await modelFor(o);
    try {
      new Model(o).validate();
    } catch (err) {
      problems.push(`${o.kind}/${o.metadata.name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

const base = renderKustomization(BASE);
const find = (kind: string, name?: string) => {
  const o = base.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!o) throw new Error(`the base has no ${kind}${name ? `/${name}` : ''}`);
  return o as K8sObject & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
};
const deployment = find('Deployment', 'triage-runner');
const podSpec = deployment.spec.template.spec;
const daemon = podSpec.containers[0];
const configMap = base.find((o) => o.kind === 'ConfigMap')! as K8sObject & { data: Record<string, string> };
const runnerConfig = configSchema.parse(parseYaml(configMap.data['config.yaml']!));

describe('deploy/kubernetes manifests', () => {
  it('render to schema-valid objects: base, the kind overlay, the ServiceMonitor component and the example Secret', async () => {
    expect(base.map((o) => o.kind).sort()).toEqual(
      [
        'ClusterRole',
        'ClusterRoleBinding',
        'ConfigMap',
        'Deployment',
        'Namespace',
        'NetworkPolicy',
        'NetworkPolicy',
        'PersistentVolumeClaim',
        'PodDisruptionBudget',
        'Role',
        'Role',
        'RoleBinding',
        'RoleBinding',
        'Service',
        'ServiceAccount',
        'ServiceAccount',
      ].sort(),
    );
    const kind = renderKustomization(path.join(BASE, 'overlays/kind'));
    const monitor = renderKustomization(path.join(BASE, 'components/servicemonitor'));
    const secret = readManifests(path.join(BASE, 'secret.example.yaml'));
    expect(await validateAll([...base, ...kind, ...monitor, ...secret])).toEqual([]);
  });

  it('the validator really rejects a broken manifest (a wrong type and a missing container name)', async () => {
    const broken = structuredClone(deployment);
    broken.spec.replicas = 'two';
    delete broken.spec.template.spec.containers[0].name;
    const problems = await validateAll([broken]);
    expect(problems.join('\n')).toMatch(/replicas must be integer/);
    expect(problems.join('\n')).toMatch(/containers\/0 must have required property name/);
  });

  it('keeps the example Secret out of the kustomization, with placeholders only', () => {
    expect(readFileSync(path.join(BASE, 'kustomization.yaml'), 'utf8')).not.toMatch(
      /^\s*-\s*secret\.example\.yaml/m,
    );
    expect(base.some((o) => o.kind === 'Secret')).toBe(false);
    const [secret] = readManifests(path.join(BASE, 'secret.example.yaml')) as (K8sObject & {
      stringData: Record<string, string>;
    })[];
    expect(Object.values(secret!.stringData).every((v) => v === 'REPLACE-ME')).toBe(true);
  });

  it('runs two hardened daemon replicas with probes on /healthz and /readyz and resource limits', () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(podSpec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    for (const container of [...podSpec.initContainers, ...podSpec.containers]) {
      expect(container.securityContext).toMatchObject({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(Object.keys(container.resources.limits).sort()).toEqual(['cpu', 'memory']);
    }
    expect(daemon.livenessProbe.httpGet.path).toBe('/healthz');
    expect(daemon.readinessProbe.httpGet.path).toBe('/readyz');
    expect(daemon.resources.requests).toEqual({ cpu: '250m', memory: '512Mi' });
    expect(daemon.resources.limits).toEqual({ cpu: '1', memory: '1Gi' });
    expect(deployment.spec.template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '8080',
    });
  });

  it('mounts the token only where it is needed: the ServiceAccounts never automount, the daemon pod opts in', () => {
    for (const sa of base.filter((o) => o.kind === 'ServiceAccount')) {
      expect((sa as { automountServiceAccountToken?: boolean }).automountServiceAccountToken).toBe(false);
    }
    expect(podSpec.serviceAccountName).toBe('triage-runner');
    expect(podSpec.automountServiceAccountToken).toBe(true);
  });

  it("builds agent Jobs from the shipped config with no ServiceAccount token, on the claim's node", async () => {
    const job = buildJob(
      runnerConfig,
      {
        runId: 'r1',
        incidentId: 'i1',
        labels: {},
        image: runnerConfig.agent.image,
        command: 'claude',
        args: [],
        env: {},
        secretEnv: {},
        mounts: [],
        tmpfs: [],
        stdin: '',
        workdir: '/workspace',
      } as unknown as RunSpec,
      { jobName: 'triage-r1' },
    );
    const pod = job.spec!.template.spec!;
    expect(pod.serviceAccountName).toBe(find('ServiceAccount', 'triage-agent').metadata.name);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(
      pod.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.labelSelector,
    ).toEqual({
      matchLabels: deployment.spec.selector.matchLabels,
    });
    expect(
      await validateAll([{ ...job, apiVersion: 'batch/v1', kind: 'Job' } as unknown as K8sObject]),
    ).toEqual([]);
  });

  it('builds the Job of a gateway run with no model key in it: the run token comes from the run folder, the provider URL is the Service port the agents may reach', async () => {
    const token = `trg-${'t'.repeat(43)}`;
    const gatewayUrl = `${runnerConfig.kubernetes.broker.url}/anthropic`;
    // What the pipeline hands the engine for a pod behind the gateway (src/gateway/run.ts, pod route).
    const launch = launchWithPodToken(
      {
        command: 'claude',
        args: ['-p'],
        env: { ANTHROPIC_BASE_URL: gatewayUrl },
        secretEnv: { ANTHROPIC_API_KEY: token },
      },
      token,
      '/workspace/.triage/runs/r1',
    );
    const job = buildJob(
      runnerConfig,
      {
        runId: 'r1',
        incidentId: 'i1',
        labels: {},
        image: runnerConfig.agent.image,
        ...launch,
        secretEnv: launch.secretEnv ?? {},
        mounts: [],
        tmpfs: [],
        stdin: '',
        workdir: '/workspace',
      } as unknown as RunSpec,
      { jobName: 'triage-r1' },
    );
    const container = job.spec!.template.spec!.containers[0]!;
    expect(container.env!.filter((e) => e.valueFrom)).toEqual([]);
    expect(JSON.stringify(job)).not.toContain(token);
    expect(container.env!.map((e) => e.name).sort()).toEqual(['ANTHROPIC_BASE_URL', POD_TOKEN_ENV]);
    // The provider URL is the Service's `pods` port, the one port the agents' NetworkPolicy opens.
    const url = new URL(gatewayUrl);
    const service = find('Service', 'triage-runner');
    expect(url.hostname).toBe(`${service.metadata.name}.${service.metadata.namespace}.svc`);
    const pods = service.spec.ports.find((p: { name: string }) => p.name === 'pods');
    expect(Number(url.port)).toBe(pods.port);
    const agents = find('NetworkPolicy', 'triage-runner-agents');
    expect(agents.spec.egress[1].ports).toEqual([{ port: pods.port, protocol: 'TCP' }]);
    expect(
      await validateAll([{ ...job, apiVersion: 'batch/v1', kind: 'Job' } as unknown as K8sObject]),
    ).toEqual([]);
  });

  it('wires the daemon to the kubernetes engine, the API-key Secret, the generated ConfigMap and the RWO claim', () => {
    const env = Object.fromEntries(daemon.env.map((e: { name: string }) => [e.name, e]));
    expect(env.TRIAGE_RUNNER_ENGINE.value).toBe('kubernetes');
    const [secret] = readManifests(path.join(BASE, 'secret.example.yaml'));
    for (const key of ['ANTHROPIC_API_KEY', 'CODEX_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY']) {
      expect(env[key].valueFrom.secretKeyRef).toEqual({ name: secret!.metadata.name, key, optional: true });
    }
    const volumes = Object.fromEntries(podSpec.volumes.map((v: { name: string }) => [v.name, v]));
    expect(volumes.config.configMap.name).toBe(configMap.metadata.name);
    expect(configMap.metadata.name).toMatch(/^triage-runner-config-[0-9a-f]{10}$/);
    expect(Object.keys(configMap.data).sort()).toEqual(['config.yaml', 'triage-system-prompt.md']);
    const pvc = find('PersistentVolumeClaim');
    expect(volumes.data.persistentVolumeClaim.claimName).toBe(pvc.metadata.name);
    // ReadWriteOnce with leader election on: the replicas and the Jobs share the claim's node.
    expect(pvc.spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(runnerConfig.leader_election.enabled).toBe(true);
    const colocate = podSpec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    expect(colocate).toEqual([
      {
        topologyKey: 'kubernetes.io/hostname',
        labelSelector: { matchLabels: deployment.spec.selector.matchLabels },
      },
    ]);
    expect(runnerConfig.kubernetes.same_node_as).toEqual(deployment.spec.selector.matchLabels);
    const mounts = Object.fromEntries(
      daemon.volumeMounts.map((m: { name: string; mountPath: string }) => [m.name, m.mountPath]),
    );
    expect(daemon.args).toEqual(['daemon', '--config', `${mounts.config}/config.yaml`, '--create-root']);
    expect(runnerConfig.system_prompt_file).toBe(`${mounts.config}/triage-system-prompt.md`);
    expect(runnerConfig.kubernetes.volume_root).toBe(mounts.data);
    // Everything an agent Job mounts must be on the shared volume.
    for (const dir of [
      runnerConfig.workspaces_root,
      runnerConfig.skills.cache_dir,
      runnerConfig.personas_dir,
      runnerConfig.briefs_dir,
    ]) {
      expect(dir.startsWith(`${mounts.data}/`)).toBe(true);
    }
    const publish = podSpec.initContainers.find((c: { name: string }) => c.name === 'publish-configs');
    expect(publish.args[0]).toContain(path.posix.dirname(path.posix.dirname(runnerConfig.personas_dir)));
  });

  it('listens beyond loopback with the bearer token wired from the Secret, so the daemon accepts to start', () => {
    expect(runnerConfig.http.host).toBe('0.0.0.0');
    expect(exposureProblem(runnerConfig.http.host, undefined)).toMatch(/HTTP_TOKEN secret is not set/);
    const env = Object.fromEntries(daemon.env.map((e: { name: string }) => [e.name, e]));
    const [secret] = readManifests(path.join(BASE, 'secret.example.yaml')) as (K8sObject & {
      stringData: Record<string, string>;
    })[];
    for (const name of ['HTTP_TOKEN', 'PAGERDUTY_WEBHOOK_SECRET']) {
      const variable = runnerConfig.secrets[name]?.env;
      expect(variable, `secrets.${name} is read from an environment variable`).toBeDefined();
      expect(env[variable!].valueFrom.secretKeyRef).toMatchObject({ name: secret!.metadata.name, key: name });
      expect(Object.keys(secret!.stringData)).toContain(name);
    }
    // Probes reach /healthz and /readyz without the token.
    expect(daemon.readinessProbe.httpGet.httpHeaders).toBeUndefined();
  });

  it("agrees with the daemon's config: namespace, agent ServiceAccount, claim and Secret names", () => {
    expect(runnerConfig.engine).toBe('kubernetes');
    expect(runnerConfig.kubernetes.namespace).toBe(find('Namespace').metadata.name);
    expect(runnerConfig.kubernetes.workspaces_claim).toBe(find('PersistentVolumeClaim').metadata.name);
    expect(runnerConfig.kubernetes.service_account).toBe(
      find('ServiceAccount', 'triage-agent').metadata.name,
    );
    expect(runnerConfig.kubernetes.secret_name).toBe(
      readManifests(path.join(BASE, 'secret.example.yaml'))[0]!.metadata.name,
    );
    for (const o of base.filter(
      (x) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(x.kind),
    )) {
      expect(`${o.kind}/${o.metadata.name} in ${o.metadata.namespace}`).toBe(
        `${o.kind}/${o.metadata.name} in triage-runner`,
      );
    }
  });

  it('gives the daemon exactly Job, pod and log access in its own namespace', () => {
    const role = find('Role', 'triage-runner-jobs');
    expect(role.rules).toEqual([
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'list', 'watch', 'delete'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
    ]);
    const binding = find('RoleBinding', 'triage-runner-jobs');
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: role.metadata.name });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'triage-runner', namespace: 'triage-runner' },
    ]);
  });

  it('gives the daemon the Lease by name and its pod label, in its own namespace only, for leader election', () => {
    const role = find('Role', 'triage-runner-leader-election');
    expect(role.metadata.namespace).toBe('triage-runner');
    expect(role.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [runnerConfig.leader_election.lease_name],
        verbs: ['get', 'update'],
      },
      { apiGroups: [''], resources: ['pods'], verbs: ['patch'] },
    ]);
    // The Lease lives where the Role applies.
    expect(runnerConfig.leader_election.namespace ?? runnerConfig.kubernetes.namespace).toBe('triage-runner');
    const binding = find('RoleBinding', 'triage-runner-leader-election');
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: role.metadata.name,
    });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'triage-runner', namespace: 'triage-runner' },
    ]);
    // Nothing cluster-wide about leases or pods beyond the read-only view.
    const view = find('ClusterRole');
    for (const rule of view.rules as { apiGroups: string[]; verbs: string[] }[]) {
      expect(rule.apiGroups).not.toContain('coordination.k8s.io');
      expect(rule.verbs.every((v) => ['get', 'list', 'watch'].includes(v))).toBe(true);
    }
  });

  it('routes the Service to the leader by its role label, on the HTTP and broker ports, with probes that keep a healthy standby ready', () => {
    const service = find('Service');
    expect(service.spec.selector).toEqual({
      ...deployment.spec.selector.matchLabels,
      'triage-runner.io/role': 'leader',
    });
    expect(service.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port])).toEqual([
      ['http', 8080],
      ['pods', 8081],
    ]);
    const env = Object.fromEntries(daemon.env.map((e: { name: string }) => [e.name, e]));
    expect(env.POD_NAME.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(env.POD_NAMESPACE.valueFrom.fieldRef.fieldPath).toBe('metadata.namespace');
    expect(daemon.readinessProbe.httpGet.path).toBe('/readyz');
    expect(deployment.spec.replicas).toBe(2);
    const pdb = find('PodDisruptionBudget');
    expect(pdb.spec).toEqual({
      maxUnavailable: 1,
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
      selector: { matchLabels: deployment.spec.selector.matchLabels },
    });
    // The pods reach the broker through that Service.
    const url = new URL(runnerConfig.kubernetes.broker.url!);
    expect(url.hostname).toBe(`${service.metadata.name}.${service.metadata.namespace}.svc`);
    expect(Number(url.port)).toBe(runnerConfig.kubernetes.broker.port);
    expect(daemon.ports.find((p: { name: string }) => p.name === 'pods').containerPort).toBe(
      runnerConfig.kubernetes.broker.port,
    );
  });

  it('keeps the read-only cluster view without Secrets, exec or attach, and binds it to the daemon only', () => {
    const view = find('ClusterRole');
    const rules = view.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const resources = rules.flatMap((r) => r.resources);
    expect(resources).not.toContain('secrets');
    expect(resources.some((r) => r === '*' || r.startsWith('pods/exec') || r.startsWith('pods/attach'))).toBe(
      false,
    );
    expect([...new Set(rules.flatMap((r) => r.verbs))].sort()).toEqual(['get', 'list', 'watch']);
    // The agents hold no token and no binding: the daemon's broker runs their calls with this view.
    const bindings = base.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') as any[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(bindings.flatMap((b) => b.subjects.map((s: { name: string }) => s.name))).not.toContain(
      'triage-agent',
    );
    const daemonView = bindings.find((b) => b.roleRef.name === view.metadata.name);
    expect(daemonView.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'triage-runner', namespace: 'triage-runner' },
    ]);
  });

  it('grants no wildcard, no Secrets and no escalation verb in any Role or ClusterRole, base or overlay', () => {
    const all = [...base, ...renderKustomization(path.join(BASE, 'overlays/kind'))];
    const roles = all.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole');
    expect(roles.length).toBeGreaterThanOrEqual(2);
    for (const role of roles) {
      for (const rule of (role as unknown as { rules: Record<string, string[] | undefined>[] }).rules) {
        const words = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...(rule.verbs ?? [])];
        expect(words, role.metadata.name).not.toContain('*');
        expect(rule.resources, role.metadata.name).not.toContain('secrets');
        for (const verb of ['bind', 'escalate', 'impersonate', 'deletecollection'])
          expect(rule.verbs, `${role.metadata.name} ${verb}`).not.toContain(verb);
        // Writes other than Jobs: the leader's Lease, by name, and its pod's role label; nothing else.
        if (rule.verbs?.includes('update'))
          expect(rule, role.metadata.name).toMatchObject({
            resources: ['leases'],
            resourceNames: ['triage-runner'],
          });
        if (rule.verbs?.includes('patch'))
          expect([role.kind, rule.resources, rule.verbs]).toEqual(['Role', ['pods'], ['patch']]);
        expect(rule.nonResourceURLs, role.metadata.name).toBeUndefined();
      }
    }
    // ConfigMaps are the one configuration resource the view reads, documented as a deliberate choice.
    expect(readFileSync(path.join(ROOT, 'deploy/kubernetes/rbac.yaml'), 'utf8')).toMatch(
      /ConfigMaps are readable on purpose/,
    );
  });

  it('lets agents reach only the daemon broker port (and DNS), and the broker port only from agents', () => {
    const daemonPolicy = find('NetworkPolicy', 'triage-runner-daemon');
    const agentLabels = { 'app.kubernetes.io/managed-by': 'triage-runner' };
    expect(daemonPolicy.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(daemonPolicy.spec.ingress).toEqual([
      { ports: [{ port: 8080, protocol: 'TCP' }] },
      { from: [{ podSelector: { matchLabels: agentLabels } }], ports: [{ port: 8081, protocol: 'TCP' }] },
    ]);
    expect(daemon.ports).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'pods', containerPort: 8081, protocol: 'TCP' },
    ]);
    const daemonEgress = daemonPolicy.spec.egress.flatMap((r: { ports: { port: number }[] }) =>
      r.ports.map((p) => p.port),
    );
    expect([...new Set(daemonEgress)].sort()).toEqual([443, 53, 6443]);
    const agents = find('NetworkPolicy', 'triage-runner-agents');
    expect(agents.spec.podSelector.matchLabels).toEqual(agentLabels);
    expect(agents.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(agents.spec.ingress).toEqual([]);
    const [dns, broker, ...rest] = agents.spec.egress;
    expect(rest).toEqual([]);
    expect(dns.to[0].podSelector.matchLabels).toEqual({ 'k8s-app': 'kube-dns' });
    expect(dns.ports.map((p: { port: number }) => p.port)).toEqual([53, 53]);
    expect(broker).toEqual({
      to: [{ podSelector: { matchLabels: deployment.spec.selector.matchLabels } }],
      ports: [{ port: 8081, protocol: 'TCP' }],
    });
    // No ipBlock anywhere in the agents' egress: not the API server, not the internet.
    expect(JSON.stringify(agents.spec.egress)).not.toContain('ipBlock');
  });

  it('the kind overlay swaps the claim to ReadWriteOnce and uses the locally loaded image', () => {
    const kind = renderKustomization(path.join(BASE, 'overlays/kind'));
    const pvc = kind.find((o) => o.kind === 'PersistentVolumeClaim') as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(pvc.spec.accessModes).toEqual(['ReadWriteOnce']);
    const container = (kind.find((o) => o.kind === 'Deployment') as any).spec.template.spec.containers[0]; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(container.image).toBe('triage-runner:dev');
    expect(container.imagePullPolicy).toBe('Never');
  });
});

describe('the daemon image (Dockerfile)', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('builds in a separate stage and installs only production dependencies in the runtime stage', () => {
    expect(dockerfile).toMatch(/FROM \$\{NODE_IMAGE\} AS build[\s\S]*RUN npm run build/);
    expect(runtime).toContain('npm ci --omit=dev');
    expect(runtime).toContain('COPY --from=build /src/dist/ dist/');
    expect(runtime).toMatch(/COPY configs\/ configs\/\nCOPY runners\/ runners\//);
  });

  it('runs as uid 10001, keeps writable state under /var/lib/triage-runner and checks /healthz with node', () => {
    expect(runtime).toContain('USER 10001:10001');
    expect(runtime).toContain('VOLUME ["/var/lib/triage-runner"]');
    expect(runtime).toMatch(/SKILLS_CACHE_DIR=\/var\/lib\/triage-runner\/skills/);
    expect(runtime).toMatch(/TRIAGE_RUNNER_WORKSPACES_ROOT=\/var\/lib\/triage-runner\/workspaces/);
    expect(runtime).toMatch(/HEALTHCHECK[\s\S]*CMD \["node", "-e", "fetch\(.*\/healthz/);
    expect(runtime).toContain('ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/dist/cli/main.js"]');
    expect(runtime).toContain('CMD ["daemon", "--create-root"]');
  });

  it('verifies the pinned kubectl download against a sha256', () => {
    expect(dockerfile).toMatch(/ARG KUBECTL_VERSION=v\d+\.\d+\.\d+/);
    expect(dockerfile).toMatch(/sha256sum -c -/);
  });

  it('keeps secrets, git history and dependencies out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.git', 'node_modules', 'dist', '.env', 'agent-home', 'test'])
      expect(ignored).toContain(entry);
  });
});

describe('deploy/kubernetes/config', () => {
  it('ships the same system prompt as configs/ (kustomize cannot read outside its folder, so it is a copy)', () => {
    const shipped = readFileSync(path.join(ROOT, 'configs/triage-system-prompt.md'), 'utf8');
    const copy = readFileSync(path.join(ROOT, 'deploy/kubernetes/config/triage-system-prompt.md'), 'utf8');
    expect(copy).toBe(shipped);
  });
});
