import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { isDeepStrictEqual } from 'node:util';
import { resolveSecrets } from '../../../src/config/index.js';
import { agentSecrets } from '../../../src/config/secrets.js';
import { startCliDaemon, type CliDaemon } from '../../support/cli-daemon.js';
import {
  agentJob,
  daemonOf,
  find,
  KUBECTL,
  KUSTOMIZE_ROOT,
  podConfig,
  podEnv,
  readManifests,
  render,
  renderOverlay,
  type Obj,
} from '../../support/manifests.js';
import { REPO_ROOT } from '../../support/runs.js';
import { scratchDir } from '../../support/scratch.js';
import { freePort } from '../../support/net.js';

// What an operator needs to deploy the manifests as shipped: both images through kustomize `images:`,
// every secret the daemon reads wired from the one Secret (and none of the daemon's own reaching an
// agent), an Ingress that exposes only the senders' routes of the real server, and an egress lockdown.

const VERSION = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
const README = readFileSync(path.join(REPO_ROOT, 'deploy/README.md'), 'utf8');
const envByName = (objects: Obj[]) =>
  Object.fromEntries((daemonOf(objects).container.env as Obj[]).map((e) => [e.name as string, e])) as Record<
    string,
    Obj
  >;

/** The rendered daemon image, the init container's, and the image its agent Jobs get. */
function images(objects: Obj[]): { daemon: string; init: string; agent: string } {
  const { container, pod } = daemonOf(objects);
  return {
    daemon: container.image,
    init: (pod.initContainers as Obj[])[0]!.image,
    agent: agentJob(podConfig(objects)).spec.template.spec.containers[0].image,
  };
}

describe.skipIf(!KUBECTL)('images', () => {
  it("names both images in the base's placeholder registry, tagged with the package's version", () => {
    expect(images(render('base'))).toEqual({
      daemon: `ghcr.io/your-org/triage-runner:${VERSION}`,
      init: `ghcr.io/your-org/triage-runner:${VERSION}`,
      agent: `ghcr.io/your-org/triage-agent:${VERSION}`,
    });
  });

  it("rewrites only the agent image variable among the daemon's environment values", () => {
    const source = readManifests('base/deployment.yaml')[0]!.spec.template.spec.containers[0].env as Obj[];
    const rendered = daemonOf(render('base')).container.env as Obj[];
    const changed = rendered.filter((e, i) => !isDeepStrictEqual(e, source[i]));
    expect(changed.map((e) => e.name)).toEqual(['TRIAGE_RUNNER_AGENT_IMAGE']);
  });

  it.each(['base', 'overlays/ha'])(
    "takes an operator's registry from an overlay's images: on %s, Jobs included",
    (topology) => {
      const objects = renderOverlay({
        resources: [topology],
        extra: {
          images: [
            {
              name: 'ghcr.io/your-org/triage-runner',
              newName: 'registry.example.com/sre/triage-runner',
              newTag: '1.2.3',
            },
            {
              name: 'ghcr.io/your-org/triage-agent',
              newName: 'registry.example.com/sre/triage-agent',
              newTag: '1.2.3',
            },
          ],
        },
      });
      expect(images(objects)).toEqual({
        daemon: 'registry.example.com/sre/triage-runner:1.2.3',
        init: 'registry.example.com/sre/triage-runner:1.2.3',
        agent: 'registry.example.com/sre/triage-agent:1.2.3',
      });
    },
  );

  it('the kind overlay runs the images loaded into the node and never pulls, for the daemon and its Jobs', () => {
    const objects = render('overlays/kind');
    expect(images(objects)).toEqual({
      daemon: 'triage-runner:dev',
      init: 'triage-runner:dev',
      agent: 'triage-agent:dev',
    });
    const { container, pod } = daemonOf(objects);
    expect([container.imagePullPolicy, (pod.initContainers as Obj[])[0]!.imagePullPolicy]).toEqual([
      'Never',
      'Never',
    ]);
    expect(agentJob(podConfig(objects)).spec.template.spec.containers[0].imagePullPolicy).toBe('Never');
  });

  it('the README says how to set the registry, with the names the base uses', () => {
    expect(README).toMatch(/kustomize edit set image triage-runner=\S+ triage-agent=\S+/);
    expect(README).toContain('name: ghcr.io/your-org/triage-runner');
    expect(README).toContain('name: ghcr.io/your-org/triage-agent');
  });
});

/** The commented notify example in config.yaml, uncommented (YAML text). */
function notifyExampleText(): string {
  const text = readFileSync(path.join(KUSTOMIZE_ROOT, 'base/config/config.yaml'), 'utf8');
  const block = /# BEGIN notify example\n([\s\S]*?)# END notify example/.exec(text)?.[1];
  if (!block) throw new Error('config.yaml has no notify example block');
  return block.replace(/^# ?/gm, '');
}
const notifyExample = () => parseYaml(notifyExampleText()) as Record<string, unknown>;

describe.skipIf(!KUBECTL)('secrets', () => {
  const secretKeys = () => Object.keys(readManifests('base/secret.example.yaml')[0]!.stringData as object);

  it('wires every secret the daemon reads from the Secret, optional except the HTTP token', () => {
    const objects = render('base');
    const config = podConfig(objects);
    const env = envByName(objects);
    const example = notifyExample() as { secrets: Record<string, { env: string }> };
    const declared = { ...config.secrets, ...example.secrets };
    for (const [name, source] of Object.entries(declared)) {
      const ref = env[source.env!]?.valueFrom?.secretKeyRef;
      expect(ref, `${name} (variable ${source.env})`).toMatchObject({
        name: config.kubernetes.secret_name,
        key: name,
      });
      expect(ref.optional ?? false, name).toBe(name !== 'HTTP_TOKEN');
      expect(secretKeys(), name).toContain(name);
    }
    // And the Secret holds nothing the Deployment does not read.
    const read = Object.values(env).flatMap((e) =>
      e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : [],
    );
    expect([...secretKeys()].sort()).toEqual([...read].sort());
  });

  it('the notify example loads as configuration and names only credentials the Deployment reads', () => {
    const example = notifyExample() as {
      notify: { sinks: { secret: string; notes?: { secret: string } }[] };
    };
    const objects = render('base');
    find(objects, 'ConfigMap').data['config.yaml'] += `\n${notifyExampleText()}`;
    const config = podConfig(objects);
    expect(config.notify.sinks.map((s) => s.type)).toEqual(['slack', 'webhook', 'pagerduty']);
    const named = example.notify.sinks.flatMap((s) => [s.secret, ...(s.notes ? [s.notes.secret] : [])]);
    expect(named.sort()).toEqual([
      'PAGERDUTY_API_TOKEN',
      'PAGERDUTY_ROUTING_KEY',
      'SLACK_BOT_TOKEN',
      'WEBHOOK_SIGNING_SECRET',
    ]);
    // With every key of the Secret set, an agent gets the model keys and nothing of the daemon's own.
    const values = resolveSecrets(config, podEnv(objects)).values;
    expect(Object.keys(values).sort()).toEqual([...secretKeys()].sort());
    expect(Object.keys(agentSecrets(config, values)).sort()).toEqual([
      'ANTHROPIC_API_KEY',
      'CODEX_API_KEY',
      'GEMINI_API_KEY',
      'OPENAI_API_KEY',
    ]);
  });

  it('as shipped (no sink on), the notification credentials are not read at all, so no agent can get one', () => {
    const objects = render('base');
    const config = podConfig(objects);
    const values = resolveSecrets(config, podEnv(objects)).values;
    for (const name of [
      'SLACK_BOT_TOKEN',
      'WEBHOOK_SIGNING_SECRET',
      'PAGERDUTY_ROUTING_KEY',
      'PAGERDUTY_API_TOKEN',
    ])
      expect(values[name], name).toBeUndefined();
    expect(Object.keys(agentSecrets(config, values)).sort()).toEqual([
      'ANTHROPIC_API_KEY',
      'CODEX_API_KEY',
      'GEMINI_API_KEY',
      'OPENAI_API_KEY',
    ]);
  });
});

describe.skipIf(!KUBECTL)('the Ingress component', () => {
  const ingress = () =>
    find(renderOverlay({ resources: ['base'], components: ['components/ingress'] }), 'Ingress');
  const paths = () => (ingress().spec.rules as Obj[]).flatMap((r) => r.http.paths as Obj[]);
  // The real `triage-runner daemon` (every route it serves), on loopback with the bearer token set.
  let daemon: CliDaemon;
  let base: string;
  const token = 'ingress-test-token';

  beforeAll(async () => {
    const dir = scratchDir('ingress-');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    daemon = await startCliDaemon({
      dir,
      config: {
        workspaces_root: path.join(dir, 'incidents'),
        engine: 'process',
        http: { port, host: '127.0.0.1' },
      },
      args: [],
      env: { PATH: process.env.PATH, HOME: dir, TRIAGE_RUNNER_HTTP_TOKEN: token },
    });
  });
  afterAll(async () => daemon?.stop());

  it('exposes exactly the Alertmanager, PagerDuty and Slack-interaction routes, as exact paths, over TLS', () => {
    expect(paths().map((p) => [p.path, p.pathType])).toEqual([
      ['/v1/alerts/alertmanager', 'Exact'],
      ['/v1/alerts/pagerduty', 'Exact'],
      ['/v1/slack/interactions', 'Exact'],
    ]);
    const spec = ingress().spec;
    const hosts = (spec.rules as Obj[]).map((r) => r.host);
    expect((spec.tls as Obj[]).flatMap((t) => t.hosts)).toEqual(hosts);
    const service = find(render('base'), 'Service');
    for (const p of paths())
      expect(p.backend.service).toEqual({ name: service.metadata.name, port: { name: 'http' } });
  });

  it("each exposed path is a POST route of the daemon's server that refuses a caller without credentials", async () => {
    for (const p of paths()) {
      const res = await fetch(`${base}${p.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      // 401: bearer token or signature missing; 503: the signing secret is not configured. Never 404/405.
      expect([401, 503], `${p.path} answered ${res.status}`).toContain(res.status);
    }
  });

  it("accepts the README's first alert, posted with the bearer token as the walkthrough does", async () => {
    const alert = /cat > alert\.json <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(README)?.[1];
    expect(alert, 'deploy/README.md has the alert.json example').toBeDefined();
    const res = await fetch(`${base}/v1/alerts/alertmanager`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: alert,
    });
    const body = (await res.json()) as { incidentId: string | null };
    expect(res.status, JSON.stringify(body)).toBe(202);
    expect(body.incidentId).toEqual(expect.any(String));
  });

  it('exposes none of the routes that only read: the status API, the page, /metrics, /readyz, /healthz', async () => {
    const res = await fetch(`${base}/no-such-route`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const { message } = (await res.json()) as { message: string };
    const routes = message
      .slice(message.indexOf('answers ') + 8)
      .split(', ')
      .map((r) => r.split(' ') as [string, string]);
    const exposed = new Set(paths().map((p) => p.path as string));
    const readers = routes.filter(([method]) => method === 'GET');
    expect(readers.map(([, url]) => url)).toEqual(
      expect.arrayContaining(['/metrics', '/readyz', '/healthz', '/v1/incidents', '/']),
    );
    for (const [, url] of readers) expect(exposed.has(url), url).toBe(false);
    // Every exposed path is one of the server's POST routes.
    const posts = new Set(routes.filter(([method]) => method === 'POST').map(([, url]) => url));
    for (const p of exposed) expect(posts.has(p), p).toBe(true);
  });
});

const DOCUMENTATION_RANGES = [/^192\.0\.2\./, /^198\.51\.100\./, /^203\.0\.113\./];

describe.skipIf(!KUBECTL)('the restricted-egress component', () => {
  it("replaces the daemon's HTTPS-anywhere egress with one placeholder ipBlock per destination, leaving DNS and the agents alone", () => {
    const base = render('base');
    const objects = renderOverlay({
      resources: ['overlays/ha'],
      components: ['components/restricted-egress'],
    });
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name).sort()).toEqual([
      'triage-runner-agents',
      'triage-runner-daemon',
      'triage-runner-daemon-apiserver',
      'triage-runner-daemon-model',
      'triage-runner-daemon-notify',
    ]);
    for (const name of ['triage-runner-daemon', 'triage-runner-agents'])
      expect(find(objects, 'NetworkPolicy', name).spec).toEqual(find(base, 'NetworkPolicy', name).spec);
    const ports = new Map<string, number[]>();
    for (const policy of policies.filter((p) => p.metadata.name.startsWith('triage-runner-daemon-'))) {
      const rules = policy.spec.egress as Obj[];
      const blocks = rules.flatMap((r) => (r.to as Obj[]).map((peer) => peer.ipBlock?.cidr as string));
      // Every address is a documentation placeholder the operator must replace: none matches a real host.
      for (const cidr of blocks)
        expect(
          DOCUMENTATION_RANGES.some((r) => r.test(cidr)),
          cidr,
        ).toBe(true);
      ports.set(
        policy.metadata.name,
        rules.flatMap((r) => (r.ports as Obj[]).map((p) => p.port)),
      );
    }
    expect(Object.fromEntries(ports)).toEqual({
      'triage-runner-daemon-apiserver': [443, 6443],
      'triage-runner-daemon-model': [443],
      'triage-runner-daemon-notify': [443],
    });
  });
});
