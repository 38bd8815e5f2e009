import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchWithPodToken, POD_TOKEN_ENV } from '../../../src/gateway/pod-route.js';
import { exposureProblem } from '../../../src/server/exposure.js';
import {
  agentJob,
  daemonOf,
  find,
  KUBECTL,
  KUSTOMIZE_ROOT,
  podConfig,
  readManifests,
  render,
  schemaProblems,
  type Obj,
} from '../../support/manifests.js';

// The base as `kubectl kustomize` renders it, checked for what the deployment promises: least
// privilege, hardening, probes, and names that agree with the daemon's configuration as it loads in
// the pod (config.yaml from the ConfigMap, then the Deployment's environment).

const envOf = (container: Obj) =>
  Object.fromEntries((container.env as Obj[]).map((e) => [e.name as string, e])) as Record<string, Obj>;

describe.skipIf(!KUBECTL)('deploy/kubernetes/base', () => {
  const base = () => render('base');
  const secret = () => readManifests('base/secret.example.yaml')[0]!;

  it('keeps the example Secret out of the kustomization, with placeholders only', () => {
    expect(readFileSync(path.join(KUSTOMIZE_ROOT, 'base/kustomization.yaml'), 'utf8')).not.toMatch(
      /^\s*-\s*secret\.example\.yaml/m,
    );
    expect(base().some((o) => o.kind === 'Secret')).toBe(false);
    expect(Object.values(secret().stringData).every((v) => v === 'REPLACE-ME')).toBe(true);
  });

  it('runs a hardened daemon with probes on /healthz and /readyz and resource limits', () => {
    const { deployment, pod, container } = daemonOf(base());
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    for (const c of [...pod.initContainers, ...pod.containers]) {
      expect(c.securityContext).toMatchObject({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(Object.keys(c.resources.limits).sort()).toEqual(['cpu', 'memory']);
    }
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    // Probes reach /healthz and /readyz without the token.
    expect(container.readinessProbe.httpGet.httpHeaders).toBeUndefined();
    expect(container.resources.requests).toEqual({ cpu: '250m', memory: '512Mi' });
    expect(container.resources.limits).toEqual({ cpu: '1', memory: '1Gi' });
    expect(deployment.spec.template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '8742',
    });
  });

  it('mounts the token only where it is needed: the ServiceAccounts never automount, the daemon pod opts in', async () => {
    const objects = base();
    for (const sa of objects.filter((o) => o.kind === 'ServiceAccount'))
      expect(sa.automountServiceAccountToken).toBe(false);
    const { pod } = daemonOf(objects);
    expect(pod.serviceAccountName).toBe('triage-runner');
    expect(pod.automountServiceAccountToken).toBe(true);
    const job = agentJob(podConfig(objects));
    expect(job.spec.template.spec.serviceAccountName).toBe(
      find(objects, 'ServiceAccount', 'triage-agent').metadata.name,
    );
    expect(job.spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(await schemaProblems([job])).toEqual([]);
  });

  it('builds the Job of a gateway run with no model key in it: the run token comes from the run folder, the provider URL is the Service port the agents may reach', async () => {
    const objects = base();
    const config = podConfig(objects);
    const token = `trg-${'t'.repeat(43)}`;
    const gatewayUrl = `${config.kubernetes.broker.url}/anthropic`;
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
    const job = agentJob(config, { ...launch, secretEnv: launch.secretEnv ?? {} });
    const container = job.spec.template.spec.containers[0] as Obj;
    expect((container.env as Obj[]).filter((e) => e.valueFrom)).toEqual([]);
    expect(JSON.stringify(job)).not.toContain(token);
    expect((container.env as Obj[]).map((e) => e.name).sort()).toEqual(['ANTHROPIC_BASE_URL', POD_TOKEN_ENV]);
    // The provider URL is the Service's `pods` port, the one port the agents' NetworkPolicy opens.
    const url = new URL(gatewayUrl);
    const service = find(objects, 'Service', 'triage-runner');
    expect(url.hostname).toBe(`${service.metadata.name}.${service.metadata.namespace}.svc`);
    const pods = service.spec.ports.find((p: { name: string }) => p.name === 'pods');
    expect(Number(url.port)).toBe(pods.port);
    const agents = find(objects, 'NetworkPolicy', 'triage-runner-agents');
    expect(agents.spec.egress[1].ports).toEqual([{ port: pods.port, protocol: 'TCP' }]);
    expect(await schemaProblems([job])).toEqual([]);
  });

  it('wires the daemon to the kubernetes engine, the generated ConfigMap and the claim, with every Job mount on the volume', () => {
    const objects = base();
    const { pod, container } = daemonOf(objects);
    const config = podConfig(objects);
    expect(config.engine).toBe('kubernetes');
    expect(envOf(container).TRIAGE_RUNNER_ENGINE!.value).toBe('kubernetes');
    const configMap = find(objects, 'ConfigMap');
    const volumes = Object.fromEntries((pod.volumes as Obj[]).map((v) => [v.name, v]));
    expect(volumes.config!.configMap.name).toBe(configMap.metadata.name);
    expect(configMap.metadata.name).toMatch(/^triage-runner-config-[a-z0-9]{10}$/);
    expect(Object.keys(configMap.data).sort()).toEqual(['config.yaml', 'triage-system-prompt.md']);
    expect(volumes.data!.persistentVolumeClaim.claimName).toBe(
      find(objects, 'PersistentVolumeClaim').metadata.name,
    );
    const mounts = Object.fromEntries((container.volumeMounts as Obj[]).map((m) => [m.name, m.mountPath]));
    expect(container.args).toEqual(['daemon', '--config', `${mounts.config}/config.yaml`, '--create-root']);
    expect(config.system_prompt_file).toBe(`${mounts.config}/triage-system-prompt.md`);
    expect(config.kubernetes.volume_root).toBe(mounts.data);
    // Everything an agent Job mounts must be on the shared volume.
    for (const dir of [
      config.workspaces_root,
      config.skills.cache_dir,
      config.personas_dir,
      config.briefs_dir,
    ])
      expect(dir.startsWith(`${mounts.data}/`)).toBe(true);
    const publish = (pod.initContainers as Obj[]).find((c) => c.name === 'publish-configs')!;
    expect(publish.args[0]).toContain(path.posix.dirname(path.posix.dirname(config.personas_dir)));
  });

  it('listens beyond loopback with the bearer token required from the Secret, so the daemon accepts to start', () => {
    const objects = base();
    const config = podConfig(objects);
    expect(config.http.host).toBe('0.0.0.0');
    expect(exposureProblem(config.http.host, undefined)).toMatch(/HTTP_TOKEN secret is not set/);
    const env = envOf(daemonOf(objects).container);
    const variable = config.secrets.HTTP_TOKEN!.env!;
    // Not optional: a Secret without it stops the pod at creation, not in a crash loop.
    expect(env[variable]!.valueFrom.secretKeyRef).toEqual({
      name: secret().metadata.name,
      key: 'HTTP_TOKEN',
    });
    expect(Object.keys(secret().stringData)).toContain('HTTP_TOKEN');
  });

  it("agrees with the daemon's config: namespace, agent ServiceAccount, claim and Secret names", () => {
    const objects = base();
    const config = podConfig(objects);
    expect(config.kubernetes.namespace).toBe(find(objects, 'Namespace').metadata.name);
    expect(config.kubernetes.workspaces_claim).toBe(find(objects, 'PersistentVolumeClaim').metadata.name);
    expect(config.kubernetes.service_account).toBe(
      find(objects, 'ServiceAccount', 'triage-agent').metadata.name,
    );
    expect(config.kubernetes.secret_name).toBe(secret().metadata.name);
    for (const o of objects.filter(
      (x) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(x.kind),
    ))
      expect(`${o.kind}/${o.metadata.name} in ${o.metadata.namespace}`).toBe(
        `${o.kind}/${o.metadata.name} in triage-runner`,
      );
  });

  it('gives the daemon exactly Job, pod and log access in its own namespace', () => {
    const objects = base();
    const role = find(objects, 'Role', 'triage-runner-jobs');
    expect(role.rules).toEqual([
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'list', 'watch', 'delete'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
    ]);
    const binding = find(objects, 'RoleBinding', 'triage-runner-jobs');
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: role.metadata.name });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'triage-runner', namespace: 'triage-runner' },
    ]);
  });

  it('gives the daemon the Lease by name and its pod label, in its own namespace only, for leader election', () => {
    const objects = base();
    const config = podConfig(objects);
    const role = find(objects, 'Role', 'triage-runner-leader-election');
    expect(role.metadata.namespace).toBe('triage-runner');
    expect(role.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [config.leader_election.lease_name],
        verbs: ['get', 'update'],
      },
      { apiGroups: [''], resources: ['pods'], verbs: ['patch'] },
    ]);
    // The Lease lives where the Role applies.
    expect(config.leader_election.namespace ?? config.kubernetes.namespace).toBe('triage-runner');
    const binding = find(objects, 'RoleBinding', 'triage-runner-leader-election');
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: role.metadata.name,
    });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'triage-runner', namespace: 'triage-runner' },
    ]);
  });

  it('routes the Service to the leader by its role label, on the HTTP and broker ports', () => {
    const objects = base();
    const config = podConfig(objects);
    const { deployment, container } = daemonOf(objects);
    const service = find(objects, 'Service');
    expect(service.spec.selector).toEqual({
      ...deployment.spec.selector.matchLabels,
      'triage-runner.io/role': 'leader',
    });
    expect(service.spec.ports.map((p: Obj) => [p.name, p.port])).toEqual([
      ['http', 8742],
      ['pods', 8081],
    ]);
    const env = envOf(container);
    expect(env.POD_NAME!.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(env.POD_NAMESPACE!.valueFrom.fieldRef.fieldPath).toBe('metadata.namespace');
    // The pods reach the broker through that Service.
    const url = new URL(config.kubernetes.broker.url!);
    expect(url.hostname).toBe(`${service.metadata.name}.${service.metadata.namespace}.svc`);
    expect(Number(url.port)).toBe(config.kubernetes.broker.port);
    expect((container.ports as Obj[]).find((p) => p.name === 'pods')!.containerPort).toBe(
      config.kubernetes.broker.port,
    );
  });

  it('keeps the read-only cluster view without Secrets, exec or attach, and binds it to the daemon only', () => {
    const objects = base();
    const view = find(objects, 'ClusterRole');
    const rules = view.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const resources = rules.flatMap((r) => r.resources);
    expect(resources).not.toContain('secrets');
    expect(resources.some((r) => r === '*' || r.startsWith('pods/exec') || r.startsWith('pods/attach'))).toBe(
      false,
    );
    expect([...new Set(rules.flatMap((r) => r.verbs))].sort()).toEqual(['get', 'list', 'watch']);
    for (const rule of rules) expect(rule.apiGroups).not.toContain('coordination.k8s.io');
    // The agents hold no token and no binding: the daemon's broker runs their calls with this view.
    const bindings = objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding');
    expect(bindings.flatMap((b) => (b.subjects as Obj[]).map((s) => s.name))).not.toContain('triage-agent');
    const daemonView = bindings.find((b) => b.roleRef.name === view.metadata.name)!;
    expect(daemonView.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'triage-runner', namespace: 'triage-runner' },
    ]);
  });

  it('grants no wildcard, no Secrets and no escalation verb in any Role or ClusterRole, in any topology', () => {
    const roles = [...base(), ...render('overlays/ha'), ...render('overlays/kind')].filter(
      (o) => o.kind === 'Role' || o.kind === 'ClusterRole',
    );
    expect(roles.length).toBeGreaterThanOrEqual(6);
    for (const role of roles) {
      for (const rule of role.rules as Record<string, string[] | undefined>[]) {
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
  });

  it('reads ConfigMaps cluster-wide only with the reason and the ways to narrow it written beside the rule', () => {
    const view = find(base(), 'ClusterRole');
    expect((view.rules as Obj[]).flatMap((r) => r.resources)).toContain('configmaps');
    const rbac = readFileSync(path.join(KUSTOMIZE_ROOT, 'base/rbac.yaml'), 'utf8');
    const comment = rbac.slice(
      rbac.indexOf('# ConfigMaps are readable on purpose'),
      rbac.indexOf(`name: ${view.metadata.name}`),
    );
    expect(comment).toMatch(/cluster-wide/);
    expect(comment).toMatch(/remove `configmaps`/);
    expect(comment).toMatch(/RoleBinding of this ClusterRole in\s+# each namespace/);
  });

  it('lets agents reach only the daemon broker port (and DNS), and the broker port only from agents', () => {
    const objects = base();
    const { deployment, container } = daemonOf(objects);
    const daemonPolicy = find(objects, 'NetworkPolicy', 'triage-runner-daemon');
    const agentLabels = { 'app.kubernetes.io/managed-by': 'triage-runner' };
    expect(daemonPolicy.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(daemonPolicy.spec.ingress).toEqual([
      { ports: [{ port: 8742, protocol: 'TCP' }] },
      { from: [{ podSelector: { matchLabels: agentLabels } }], ports: [{ port: 8081, protocol: 'TCP' }] },
    ]);
    expect(container.ports).toEqual([
      { name: 'http', containerPort: 8742, protocol: 'TCP' },
      { name: 'pods', containerPort: 8081, protocol: 'TCP' },
    ]);
    const agents = find(objects, 'NetworkPolicy', 'triage-runner-agents');
    expect(agents.spec.podSelector.matchLabels).toEqual(agentLabels);
    expect(agents.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(agents.spec.ingress).toEqual([]);
    const [dns, broker, ...rest] = agents.spec.egress as Obj[];
    expect(rest).toEqual([]);
    expect(dns!.to[0].podSelector.matchLabels).toEqual({ 'k8s-app': 'kube-dns' });
    expect(dns!.ports.map((p: Obj) => p.port)).toEqual([53, 53]);
    expect(broker).toEqual({
      to: [{ podSelector: { matchLabels: deployment.spec.selector.matchLabels } }],
      ports: [{ port: 8081, protocol: 'TCP' }],
    });
    // No ipBlock anywhere in the agents' egress: not the API server, not the internet.
    expect(JSON.stringify(agents.spec.egress)).not.toContain('ipBlock');
  });

  it("limits the daemon's egress to DNS and HTTPS (443, 6443), never the cloud metadata address", () => {
    const objects = base();
    const { deployment } = daemonOf(objects);
    const daemonPolicies = objects.filter(
      (o) =>
        o.kind === 'NetworkPolicy' &&
        JSON.stringify(o.spec.podSelector.matchLabels) ===
          JSON.stringify(deployment.spec.selector.matchLabels),
    );
    expect(daemonPolicies.map((p) => p.metadata.name).sort()).toEqual([
      'triage-runner-daemon',
      'triage-runner-daemon-egress',
    ]);
    const rules = daemonPolicies.flatMap((p) => (p.spec.egress ?? []) as Obj[]);
    expect([...new Set(rules.flatMap((r) => (r.ports as Obj[]).map((p) => p.port)))].sort()).toEqual([
      443, 53, 6443,
    ]);
    for (const rule of rules)
      for (const peer of rule.to as Obj[])
        if (peer.ipBlock) expect(peer.ipBlock.except).toContain('169.254.169.254/32');
  });
});
