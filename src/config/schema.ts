import { VERDICTS } from '../shared/status.js';
import { EXTRA_AGENT_TOOLS } from '../shared/types.js';
import { z } from '../shared/zod.js';
import { bytes, duration, httpUrl, int, SECRET_NAME, secretName } from './schema-parts.js';
import { prometheusEndpoint, prometheusIssues, promqlSchema } from './prometheus-schema.js';

// The single source of every configuration key: its type, default, range and description.
// YAML keys are snake_case; environment names are derived mechanically from the key path.

/** A pod toleration, as a user writes it (snake_case; the Job gets Kubernetes' own field names). */
const toleration = z
  .strictObject({
    key: z.string().min(1).optional().describe('the taint key; absent with operator Exists = every taint'),
    operator: z.enum(['Exists', 'Equal']).default('Equal'),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    toleration_seconds: z.number().int().min(0).optional().describe('NoExecute only: how long the pod stays'),
  })
  .refine((t) => t.operator !== 'Exists' || t.value === undefined, {
    message: 'operator Exists takes no value',
  });
export type Toleration = z.infer<typeof toleration>;

export const AGENT_NAMES = ['claude', 'codex', 'gemini', 'goose'] as const;
export const ENGINE_NAMES = ['docker', 'process', 'kubernetes'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];
export type EngineName = (typeof ENGINE_NAMES)[number];

/**
 * The level-2 headings of the default skill's report template (k8s4agents k8s-troubleshooter SKILL.md,
 * "Report Template - MANDATORY STRUCTURE"), which its validate-report.sh checks verbatim.
 */
export const DEFAULT_REPORT_SECTIONS = [
  '0. Executive Triage Card',
  '1. Problem Statement',
  '2. Assessment & Findings',
  '3. Root Cause Analysis',
  '4. Remediation Plan',
  '5. Proof of Work',
  '6. Supporting Evidence',
];

const secretSource = z
  .strictObject({
    env: z.string().min(1).optional().describe('read the value from this environment variable of the daemon'),
    file: z
      .string()
      .min(1)
      .optional()
      .describe('read the value from this file (e.g. a mounted Kubernetes Secret)'),
  })
  .refine((s) => (s.env === undefined) !== (s.file === undefined), {
    message: 'give exactly one of env or file; secret values are never written inline in the config',
  });
export type SecretSource = z.infer<typeof secretSource>;

const skillSource = z
  .strictObject({
    name: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9._-]{0,63}$/,
        'lowercase letters, digits, ".", "_" or "-", at most 64 characters',
      )
      .describe('folder name of the source in the cache; also the name used by skills.triage.skill'),
    git: z.string().min(1).optional().describe('git URL to clone (https, ssh or a local path)'),
    ref: z.string().min(1).default('main').describe('branch, tag or commit to check out'),
    path: z.string().min(1).optional().describe('a local folder used in place (no git)'),
    scope: z
      .enum(['user', 'project'])
      .default('project')
      .describe('project sources win over user sources when two skills share a name'),
  })
  .refine((s) => (s.git === undefined) !== (s.path === undefined), {
    message: 'give exactly one of git (with ref) or path',
  });
export type SkillSourceConfig = z.infer<typeof skillSource>;

/** Where finished investigations are delivered (one adapter per type under src/notify/sinks/). */
export const NOTIFY_SINK_TYPES = ['slack', 'webhook', 'pagerduty'] as const;
export type NotifySinkType = (typeof NOTIFY_SINK_TYPES)[number];
/**
 * The final states a sink can be told about: a run's answer or failure, an incident rejected before any
 * run (its reason), one whose alerts resolved before its run.
 */
export const NOTIFY_STATES = [...VERDICTS, 'rejected', 'resolved'] as const;
/** Incident severities in increasing order; synonyms share a rank (see src/notify/filters.ts). */
export const SEVERITY_NAMES = ['info', 'low', 'warning', 'medium', 'error', 'high', 'critical'] as const;

/** Fields only some sink types take: a field set on another type is a mistake worth reporting. */
const SINK_FIELDS: Record<string, NotifySinkType[]> = {
  channel: ['slack'],
  url: ['webhook'],
  notes: ['pagerduty'],
  thread_report: ['slack'],
};

const notifySink = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, "_" or "-", at most 64 characters')
      .describe('names the sink in the outbox, audit events, metrics and `notify --sink`'),
    type: z.enum(NOTIFY_SINK_TYPES).describe('slack | webhook | pagerduty'),
    on: z
      .array(z.enum(NOTIFY_STATES))
      .min(1)
      .default(['succeeded', 'failed', 'rejected'])
      .describe(
        'final states that are delivered: succeeded, failed, rejected (refused before any run, with its reason), resolved (its alerts resolved before its run)',
      ),
    min_severity: z
      .enum(SEVERITY_NAMES)
      .optional()
      .describe('only incidents at least this severe (unknown severities are delivered)'),
    clusters: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('only incidents from these clusters; absent = every cluster'),
    secret: secretName(
      'entry under secrets: holding the credential: Slack bot token, webhook signing secret, PagerDuty routing key',
    ),
    channel: z
      .string()
      .min(1)
      .optional()
      .describe('slack: channel ID (C0123456789, preferred) or #name; the bot must be a member'),
    thread_report: z
      .boolean()
      .optional()
      .describe('slack: post the full report in the thread (default true)'),
    url: httpUrl('webhook: where the payload is POSTed').optional(),
    api_url: httpUrl(
      'base URL override: Slack Web API (…/api/), PagerDuty Events API; for Slack Enterprise, a proxy or a test server',
    ).optional(),
    notes: z
      .strictObject({
        secret: secretName('entry under secrets: holding a PagerDuty REST API token'),
        from: z
          .email({ error: 'expected the email address of a PagerDuty user' })
          .describe('email of a PagerDuty user; the REST API requires it as the From header'),
        api_url: httpUrl('PagerDuty REST API base URL').default('https://api.pagerduty.com'),
      })
      .optional()
      .describe(
        'pagerduty: also add the summary as a note on the PagerDuty incident an incident came from (source.type pagerduty)',
      ),
  })
  .superRefine((sink, ctx) => {
    if (sink.type === 'slack' && sink.channel === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['channel'],
        message: 'a slack sink needs channel: a channel ID such as C0123456789 (or #name)',
      });
    if (sink.type === 'webhook' && sink.url === undefined)
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'a webhook sink needs url: where to POST' });
    for (const [field, types] of Object.entries(SINK_FIELDS)) {
      if ((sink as Record<string, unknown>)[field] !== undefined && !types.includes(sink.type))
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} applies to ${types.join(', ')} sinks only; remove it from this ${sink.type} sink`,
        });
    }
  });
export type NotifySinkConfig = z.infer<typeof notifySink>;
/** A grouping field: a derived name (cluster, namespace, workload) or an alert label name. */
const groupField = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a label name (letters, digits, _)');

const subjectRule = z.strictObject({
  match: z
    .record(z.string(), z.union([z.string(), z.array(z.string())]))
    .describe('incident fields (dot paths such as resource.kind) and the value or values that match'),
  subjects: z.array(z.string().min(1)).min(1).describe('boot.yml subjects booted when the rule matches'),
});

/** A registry entry's name: it appears in metrics labels, /readyz check names and Secret names. */
const CLUSTER_NAME = /^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/;
const CLUSTER_NAME_RULE =
  'lowercase letters, digits, ".", "_" or "-", starting and ending with a letter or digit, at most 63 characters';
const clusterName = z.string().regex(CLUSTER_NAME, `expected a cluster name of ${CLUSTER_NAME_RULE}`);

const clusterEntry = z
  .strictObject({
    kubeconfig: z
      .string()
      .min(1)
      .optional()
      .describe("this cluster's kubeconfig (absent: kubectl's default, ~/.kube/config)"),
    context: z
      .string()
      .min(1)
      .optional()
      .describe('the kubeconfig context to use (absent: its current-context)'),
    aliases: z
      .array(z.string().min(1).max(253))
      .default([])
      .describe('other names incidents and alerts use for this cluster'),
    prometheus: prometheusEndpoint
      .optional()
      .describe("this cluster's Prometheus-compatible endpoint, which the sandbox's promql command queries"),
  })
  .prefault({});

/** The secrets every configuration has; a `secrets:` block adds to these and may override one. */
export const BUILTIN_SECRETS: Readonly<Record<string, { env?: string; file?: string }>> = {
  ANTHROPIC_API_KEY: { env: 'ANTHROPIC_API_KEY' },
  CODEX_API_KEY: { env: 'CODEX_API_KEY' },
  OPENAI_API_KEY: { env: 'OPENAI_API_KEY' },
  GEMINI_API_KEY: { env: 'GEMINI_API_KEY' },
  HTTP_TOKEN: { env: 'TRIAGE_RUNNER_HTTP_TOKEN' },
  PAGERDUTY_WEBHOOK_SECRET: { env: 'PAGERDUTY_WEBHOOK_SECRET' },
  SLACK_SIGNING_SECRET: { env: 'SLACK_SIGNING_SECRET' },
};

const baseSchema = z.strictObject({
  workspaces_root: z
    .string()
    .min(1)
    .default('./incidents')
    .describe('folder watched for <incident>/incident.json'),
  engine: z.enum(ENGINE_NAMES).default('docker').describe('where agents run: docker | process | kubernetes'),
  agent: z
    .strictObject({
      name: z.enum(AGENT_NAMES).default('claude').describe('which agent CLI investigates'),
      model: z
        .string()
        .min(1)
        .optional()
        .describe("model name passed to the CLI; absent = the CLI's default"),
      timeout: duration('15m', 'wall-clock limit of one agent run'),
      image: z
        .string()
        .min(1)
        .default('triage-agent:latest')
        .describe('agent container image (built from runners/)'),
      command: z
        .string()
        .min(1)
        .optional()
        .describe(
          "path of the agent CLI inside the image (or on the host, process engine); default is the CLI's own name",
        ),
      max_turns: int(1, 1000).default(40).describe('turn limit, for CLIs that have one'),
      min_report_bytes: int(0, 1 << 20)
        .default(200)
        .describe('a report smaller than this counts as missing'),
      report_sections: z
        .array(z.string().min(1))
        .default(DEFAULT_REPORT_SECTIONS)
        .describe(
          "level-2 headings the report must contain, in order (checked, recorded in result.json); the prompt files list them where they say {{report_sections}}; the default is the k8s4agents skill's template",
        ),
      extra_args: z
        .array(z.string())
        .default([])
        .describe('extra arguments appended to the agent CLI invocation'),
      extra_tools: z
        .array(z.enum(EXTRA_AGENT_TOOLS))
        .default([])
        .describe(
          `built-in CLI tools offered beyond what an investigation needs (running commands, reading, writing the report, searching files, skills): ${EXTRA_AGENT_TOOLS.join(', ')}; the persona's helpers.yaml still decides, and each one's definition is sent with every model call`,
        ),
      stop_grace: duration('20s', 'after SIGINT, wait this long before SIGTERM, and again before SIGKILL'),
    })
    .prefault({})
    .describe('the agent CLI'),
  providers: z
    .strictObject({
      anthropic_base_url: z
        .string()
        .url()
        .optional()
        .describe('ANTHROPIC_BASE_URL for Claude (LLM gateway/proxy)'),
      openai_base_url: z.string().url().optional().describe('base URL of the Codex model provider (…/v1)'),
      gemini_base_url: z.string().url().optional().describe('GOOGLE_GEMINI_BASE_URL for Gemini CLI'),
      goose_provider: z.string().min(1).optional().describe('GOOSE_PROVIDER for Goose (e.g. anthropic)'),
    })
    .prefault({})
    .describe('provider endpoints; when absent the same-named daemon environment variables are used'),
  secrets: z
    .record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name'), secretSource)
    // User entries add to and override the built-in ones: a secrets: block listing only the Slack
    // token must not silently drop the agent's API key or the daemon's HTTP token.
    .transform((entries) => ({ ...BUILTIN_SECRETS, ...entries }))
    .prefault({})
    .describe(
      "secrets, each read from an env var or a file and redacted everywhere; entries add to and override the built-in ones (the agents' API keys, HTTP_TOKEN, PAGERDUTY_WEBHOOK_SECRET, SLACK_SIGNING_SECRET); HTTP_TOKEN, PAGERDUTY_WEBHOOK_SECRET and SLACK_SIGNING_SECRET stay with the daemon, the others are handed to the agent",
    ),
  gateway: z
    .strictObject({
      enabled: z
        .boolean()
        .default(true)
        .describe(
          "route the agent's model calls through the daemon's gateway: the agent gets a per-run token, never the key",
        ),
      record_bodies: z
        .boolean()
        .default(false)
        .describe('keep request and response bodies (redacted, 1 MiB each) in model-calls.jsonl'),
      bridge_port: int(1, 65535)
        .default(4180)
        .describe("loopback port inside the agent's container where the bridge serves the gateway"),
      host: z
        .string()
        .min(1)
        .default('127.0.0.1')
        .describe('address of the TCP listener for agents on the daemon host (process engine)'),
      prices: z
        .record(
          z.string().min(1),
          z.strictObject({
            input: z.number().min(0),
            output: z.number().min(0),
            cache_read: z.number().min(0).optional(),
            cache_write: z.number().min(0).optional(),
          }),
        )
        .default({})
        .describe(
          'USD per million tokens by model id prefix, added to and overriding the built-in list (cost and budget.max_usd)',
        ),
      max_request_body: bytes(
        '16MiB',
        'largest model request body the gateway reads (a long investigation sends a few MB); a larger one is answered 413 unread',
      )
        .refine((n) => n >= 1024, 'expected at least 1KiB')
        .describe(
          'largest model request body the gateway reads (a long investigation sends a few MB); a larger one is answered 413 unread',
        ),
      max_calls_in_flight: int(1, 1000)
        .default(8)
        .describe('model calls one run may have under way at once; one more is answered 429 until one ends'),
      max_connections: int(1, 100_000)
        .default(256)
        .describe(
          "connections each gateway listener holds at once (a run's socket, the TCP listener, the pod port)",
        ),
      headers_timeout: duration(
        '10s',
        "a request's headers must arrive within this (408 and closed otherwise)",
      )
        .refine((ms) => ms > 0, 'expected more than 0')
        .describe("a request's headers must arrive within this (408 and closed otherwise)"),
      request_timeout: duration(
        '60s',
        'a whole request, body included, must arrive within this; answers are not timed',
      )
        .refine((ms) => ms > 0, 'expected more than 0')
        .describe('a whole request, body included, must arrive within this; answers are not timed'),
    })
    .prefault({})
    .describe('the model gateway: one identity per run, every model call recorded'),
  budget: z
    .strictObject({
      max_tokens: z.number().int().positive().optional().describe('input + output tokens per run'),
      max_usd: z.number().positive().optional().describe('model spend per run, in USD'),
      max_model_calls: z.number().int().positive().optional().describe('model calls per run'),
      daily_usd: z
        .number()
        .positive()
        .optional()
        .describe(
          "model spend across runs per UTC day; the day's spend is kept in <workspaces_root>/.triage/model-spend.json and outlives a restart",
        ),
      reserve_output_tokens: z
        .number()
        .int()
        .min(0)
        .default(16_384)
        .describe(
          "output tokens a model call under way is held to use (less if its request's max_tokens says so) until its usage is known",
        ),
    })
    .prefault({})
    .describe('spend caps the model gateway enforces: at a cap it refuses the call and the run ends failed'),
  docker: z
    .strictObject({
      host: z
        .string()
        .optional()
        .describe('Docker API endpoint; absent = DOCKER_HOST, then the default socket'),
      network: z
        .string()
        .min(1)
        .default('none')
        .describe(
          'network mode of agent containers: none (default: the agent reaches its model and cluster only through the daemon), or bridge, host, … (opt-out: the agent can reach any address its host can)',
        ),
      memory: bytes('2g', 'memory limit per agent container'),
      cpus: z.number().positive().max(64).default(2).describe('CPU limit per agent container'),
      pids: int(16, 65536).default(512).describe('process limit per agent container'),
      user: z.string().default('1000:1000').describe('uid:gid the agent runs as (never root)'),
      tmpfs_size: bytes('256m', 'size of each writable tmpfs (home, /tmp)'),
      keep_containers: z
        .boolean()
        .default(false)
        .describe('old name of keep_runs (still honoured): keep finished containers for debugging'),
    })
    .prefault({})
    .describe('docker engine (Docker Engine or Podman Docker API)'),
  kubernetes: z
    .strictObject({
      namespace: z.string().min(1).default('triage-runner').describe('namespace for investigation Jobs'),
      service_account: z.string().min(1).default('triage-agent').describe("the agents' ServiceAccount"),
      ttl_seconds_after_finished: int(0, 604_800).default(3600).describe('Job garbage collection'),
      memory: z.string().default('2Gi').describe('agent container memory limit'),
      cpu: z.string().default('2').describe('agent container CPU limit'),
      memory_request: z.string().default('512Mi').describe('agent container memory request'),
      cpu_request: z.string().default('250m').describe('agent container CPU request'),
      secret_name: z
        .string()
        .min(1)
        .default('triage-runner-api-keys')
        .describe('Secret whose keys (named like the variables) feed the agent secretEnv by secretKeyRef'),
      run_as_user: int(1, 2_147_483_647).default(1000).describe('uid of the agent container (never root)'),
      fs_group: int(1, 2_147_483_647)
        .default(10001)
        .describe("supplemental group shared with the daemon's files"),
      tmpfs_size: z
        .string()
        .default('256Mi')
        .describe('sizeLimit of each memory-backed emptyDir (HOME, /tmp)'),
      image_pull_policy: z
        .enum(['Always', 'IfNotPresent', 'Never'])
        .default('IfNotPresent')
        .describe('agent image'),
      node_selector: z
        .record(z.string().min(1), z.string())
        .default({})
        .describe("the nodes agent Jobs may run on (the pod's nodeSelector); empty = any node"),
      tolerations: z
        .array(toleration)
        .default([])
        .describe("taints agent Jobs tolerate (the pod's tolerations), e.g. a node pool kept for them"),
      run_files: z
        .strictObject({
          size_limit: z
            .string()
            .default('1Gi')
            .describe("sizeLimit of the pod's emptyDir that holds the run's files (a Kubernetes quantity)"),
          max_input_bytes: bytes(
            '256MiB',
            "the run's files a pod is sent (workspace, run folder, skills, persona, briefs, prompt); more fails the run",
          ),
          max_output_bytes: bytes(
            '16MiB',
            'what a pod may return in all (the report, agent-notes/, output/); what passes it is refused and recorded',
          ),
          sync_interval: duration(
            '15s',
            'how often the pod returns what its agent wrote so far (a pod that dies loses only what came after)',
          ),
        })
        .prefault({})
        .describe(
          "an agent pod mounts no volume of the daemon's: it fetches its run's files from the daemon (kubernetes.broker) and returns what its agent writes",
        ),
      broker: z
        .strictObject({
          port: int(0, 65_535)
            .default(0)
            .describe(
              "TCP port agent pods reach the daemon on: their run's files, the kubectl broker and the model gateway (0 = off: the kubernetes engine cannot start a Job)",
            ),
          host: z.string().min(1).default('0.0.0.0').describe('address the pod broker listens on'),
          url: z
            .url({ protocol: /^https?$/ })
            .optional()
            .describe(
              "the broker as a pod reaches it, e.g. http://triage-runner-broker.triage-runner.svc:8081 (the daemon's Service)",
            ),
        })
        .prefault({})
        .describe(
          "the daemon's port for agent pods (their run's files, the kubectl broker, the model gateway): HTTP with per-run tokens, through the daemon's Service",
        ),
    })
    .prefault({})
    .refine((k) => k.broker.port === 0 || k.broker.url !== undefined, {
      message:
        'kubernetes.broker.url is required when kubernetes.broker.port is set (how agent pods reach the daemon)',
      path: ['broker', 'url'],
    })
    .describe('kubernetes engine (one Job per run)'),
  leader_election: z
    .strictObject({
      enabled: z
        .boolean()
        .default(false)
        .describe(
          'replicas elect one active daemon with a coordination.k8s.io/v1 Lease; the others stand by',
        ),
      lease_name: z.string().min(1).default('triage-runner').describe('the Lease object'),
      namespace: z
        .string()
        .min(1)
        .optional()
        .describe("the Lease's namespace (absent = kubernetes.namespace)"),
      identity: z
        .string()
        .min(1)
        .optional()
        .describe('holder identity written into the Lease (absent = $POD_NAME, else the host name)'),
      lease_duration: duration('15s', 'a leader not renewing for this long is replaced'),
      renew_deadline: duration(
        '10s',
        'a leader that cannot renew for this long steps down (before the lease runs out)',
      ),
      retry_period: duration('2s', 'how often the leader renews and standbys try to acquire'),
    })
    .prefault({})
    .refine((l) => l.renew_deadline < l.lease_duration, {
      message:
        'renew_deadline must be shorter than lease_duration, so a leader steps down before another can take over',
      path: ['renew_deadline'],
    })
    .refine((l) => l.retry_period < l.renew_deadline, {
      message: 'retry_period must be shorter than renew_deadline',
      path: ['retry_period'],
    })
    .describe('high availability on Kubernetes: one active replica, chosen by a Lease'),
  scheduling: z
    .strictObject({
      max_concurrent: int(1, 256).default(4).describe('runs in flight at once'),
      max_per_cluster: int(1, 256).default(2).describe('runs in flight at once per cluster'),
      dedup_window: duration('10m', 'same cluster + resource + faultType inside this window is a duplicate'),
      queue_limit: int(1, 1_000_000)
        .default(1000)
        .describe('queued incidents held in memory; overflow is deferred'),
      max_attempts: int(1, 20).default(3).describe('tries for transient failures'),
      retry_base_delay: duration('5s', 'first retry delay; doubles each attempt, with jitter'),
      retry_max_delay: duration('5m', 'longest retry delay'),
      lease_ttl: duration('30s', 'a claim not renewed for this long may be taken over'),
      shutdown_timeout: duration('30s', 'on SIGTERM, how long in-flight runs may finish'),
      rescan_interval: duration('30s', 'safety-net rescan of the workspaces root (deferred, missed events)'),
    })
    .prefault({})
    .describe('queueing and concurrency'),
  intake: z
    .strictObject({
      max_incident_bytes: bytes('1MiB', 'incident.json larger than this is rejected'),
      write_settle: duration(
        '300ms',
        'an in-place write is taken once the file stops changing for this long',
      ),
      incomplete_grace: duration(
        '5s',
        'an empty or cut-off incident.json is rejected only once unchanged this long (a slow writer may be at it)',
      ),
      webhooks: z
        .strictObject({
          group_by: z
            .array(groupField)
            .min(1)
            .default(['cluster', 'namespace', 'alertname', 'workload'])
            .describe(
              'alerts with equal values of these fields inside scheduling.dedup_window join one incident (cluster, namespace, workload are derived; other names are alert labels)',
            ),
          storm_by: z
            .array(groupField)
            .min(1)
            .default(['cluster', 'alertname'])
            .describe('the wider key that caps how many incidents one failure can open (storm_limit)'),
          storm_limit: int(1, 10_000)
            .default(3)
            .describe(
              'incidents per storm_by key inside the dedup window; further groups join the latest of them',
            ),
          fault_types: z
            .record(z.string().min(1), z.string().min(1))
            .default({})
            .describe('alertname -> faultType, merged over the built-in table for the kube-prometheus rules'),
          cluster_labels: z
            .array(z.string().min(1))
            .min(1)
            .default(['cluster', 'cluster_name', 'k8s_cluster'])
            .describe('alert labels naming the cluster, first present wins'),
          default_cluster: z
            .string()
            .min(1)
            .default('default')
            .describe('cluster of an alert that has none of cluster_labels'),
          idempotency_ttl: duration(
            '24h',
            'a delivery key (Alertmanager fingerprint + startsAt, PagerDuty event id, Idempotency-Key) is remembered this long after it was last seen',
          ),
          max_alerts_per_incident: int(1, 100_000)
            .default(500)
            .describe("alerts kept in an incident's alerts.json; later ones are counted, not stored"),
        })
        .prefault({})
        .describe('HTTP intake: Alertmanager, PagerDuty and generic webhooks'),
    })
    .prefault({})
    .describe('incident detection and validation'),
  context: z
    .strictObject({
      estimator: z.enum(['o200k', 'chars4']).default('o200k').describe('token counter'),
      budget: z
        .strictObject({
          warn: int(1, 10_000_000).default(8000).describe('log a warning above this many tokens'),
          truncate: int(1, 10_000_000).default(10_000).describe('cut the triage report to stay under this'),
        })
        .prefault({})
        .refine((b) => b.warn <= b.truncate, { message: 'warn must not exceed truncate' }),
      safety_factor: z
        .record(z.enum(AGENT_NAMES), z.number().min(1).max(4))
        .default({ claude: 1.1, codex: 1.0, gemini: 1.3, goose: 1.1 })
        .describe('multiplier over o200k counts for models whose tokenizers count more'),
      triage_prompt_cap: bytes('2MiB', 'triage output kept in memory for the prompt'),
      triage_log_cap: bytes('64MiB', 'triage output written to the run log'),
    })
    .prefault({})
    .describe('preloaded context and token budget'),
  memory: z
    .strictObject({
      retention: duration(
        '90d',
        'past investigations are listed in the prompt this long after they finished',
        10 * 365 * 24 * 3600 * 1000,
      ),
      previous_investigations: int(0, 20)
        .default(5)
        .describe('earlier investigations of the same workload or fault listed in the prompt (0 = none)'),
    })
    .prefault({})
    .describe('past investigations in reach of the next one'),
  skills: z
    .strictObject({
      cache_dir: z.string().min(1).default('./agent-home/skills').describe('skills cache (git-ignored)'),
      disable_triage_preload: z.boolean().default(false).describe('skip the triage script'),
      refresh_interval: duration('1h', 'how often git sources are fetched'),
      max_skill_file_bytes: bytes('256k', 'a SKILL.md larger than this is skipped'),
      sources: z
        .array(skillSource)
        .default([
          {
            name: 'k8s4agents',
            git: 'https://github.com/randybias/k8s4agents',
            ref: 'main',
            scope: 'project',
          },
        ])
        .describe('skill repositories (git + ref) or local folders (path)'),
      triage: z
        .strictObject({
          skill: z.string().min(1).default('k8s4agents').describe('source holding the triage script'),
          script: z
            .string()
            .min(1)
            .default('skills/k8s-troubleshooter/scripts/incident_triage.sh')
            .describe('script path inside the source'),
          args: z
            .array(z.string())
            .default(['--skip-dump', '--namespace', '{namespace}', '--output-dir', '{triage_dir}'])
            .describe(
              "arguments; {triage_dir} (the run's triage folder on the host; the agent is told its own path to it), {namespace}, {incident_id} are substituted",
            ),
          timeout: duration('30s', 'triage script wall-clock limit'),
          kill_grace: duration('2s', 'after SIGTERM, wait this long before SIGKILL'),
          validate_report: z
            .boolean()
            .default(true)
            .describe(
              "run the triage skill's report validator (a Stop hook command in its skill-hooks.json) on the agent's report; recorded in result.json",
            ),
          validator_timeout: duration(
            '30s',
            "the report validator's wall-clock limit (a lower timeout the hook declares wins)",
          ),
        })
        .prefault({}),
    })
    .prefault({})
    .describe('skills cache and triage script'),
  audit: z
    .strictObject({
      hmac_secret: z
        .string()
        .regex(/^[A-Z_][A-Z0-9_]*$/, 'the name of an entry under secrets:')
        .optional()
        .describe(
          'keys the audit chain with this secret instead of the key file: each entry carries an HMAC with it, so a forged line with recomputed hashes is detected by audit verify',
        ),
      key_file: z
        .string()
        .min(1)
        .optional()
        .describe(
          'where the audit key is kept when audit.hmac_secret is not set (default <workspaces_root>/.triage/audit.key); the daemon makes it, mode 0600, on its first start; never inside an incident workspace',
        ),
    })
    .prefault({})
    .describe('the audit trail'),
  keep_runs: z
    .boolean()
    .default(false)
    .describe(
      'keep finished agent runs on the engine (containers, Jobs) for debugging; docker.keep_containers is an alias',
    ),
  kubeconfig: z
    .string()
    .optional()
    .describe(
      'kubeconfig for the triage script and the kubectl broker (mounted into the agent only with kubectl.guard off)',
    ),
  clusters: z
    .record(z.string(), clusterEntry)
    .optional()
    .describe(
      'the cluster registry: one kubeconfig (and context) per cluster an incident can name; absent: the single `kubeconfig` serves every incident',
    ),
  prometheus: prometheusEndpoint
    .optional()
    .describe(
      'the Prometheus-compatible endpoint of the single cluster (without clusters:; with it, each entry has its own)',
    ),
  promql: promqlSchema,
  unknown_cluster: z
    .enum(['reject', 'default'])
    .default('reject')
    .describe(
      'an incident whose cluster is neither a registry name nor an alias: reject it (naming the known clusters), or route it to default_cluster',
    ),
  default_cluster: clusterName
    .optional()
    .describe('the registry entry incidents for unknown clusters go to when unknown_cluster is default'),
  kubectl: z
    .strictObject({
      guard: z
        .boolean()
        .default(true)
        .describe(
          "agents reach the cluster only through the run's kubectl broker (docker, process engines): the persona's helpers.yaml decides each call, every call is recorded, the kubeconfig stays with the daemon",
        ),
      command: z
        .string()
        .min(1)
        .default('kubectl')
        .describe("the kubectl the broker runs for allowed calls, looked up on the daemon's PATH"),
      call_timeout: duration('5m', 'a brokered kubectl call running longer is stopped'),
      access_check: z
        .boolean()
        .default(true)
        .describe(
          'check the cluster can be reached (kubectl version through kubectl.command) at start, every minute, in /readyz and when a run starts; a run against an unreachable cluster still runs, marked unreachable',
        ),
      kubeconfig: z
        .string()
        .min(1)
        .optional()
        .describe(
          "kubeconfig the broker's kubectl uses instead of `kubeconfig`: a separate read-only identity (recommended: a ServiceAccount bound to the view ClusterRole)",
        ),
      as: z
        .string()
        .min(1)
        .optional()
        .describe(
          'user the broker impersonates on every call (kubectl --as), for a read-only identity without a second kubeconfig',
        ),
    })
    .prefault({})
    .describe('the kubectl guard: persona tool policy enforced on every agent kubectl call'),
  persona: z.string().min(1).default('kubernetes-sre').describe('a folder under personas_dir'),
  personas_dir: z.string().min(1).default('./configs/personas').describe('persona folders'),
  briefs_dir: z.string().min(1).default('./configs/briefs').describe('markdown briefs curated by boot_file'),
  boot_file: z
    .string()
    .min(1)
    .default('./configs/boot.yml')
    .describe('say/ref curation; absent file = say all'),
  system_prompt_file: z
    .string()
    .min(1)
    .default('./configs/triage-system-prompt.md')
    .describe('generic system prompt'),
  user_prompt_file: z
    .string()
    .min(1)
    .default('./configs/user-prompt.md')
    .describe('the investigation request'),
  subjects: z
    .array(subjectRule)
    .default([
      { match: { faultType: ['CrashLoop', 'CrashLoopBackOff'] }, subjects: ['crashloop'] },
      { match: { faultType: 'OOMKilled' }, subjects: ['oom'] },
      { match: { faultType: ['ImagePullBackOff', 'ErrImagePull'] }, subjects: ['imagepull'] },
      { match: { faultType: ['Pending', 'FailedScheduling'] }, subjects: ['scheduling'] },
      { match: { faultType: ['FailedRollout', 'ProgressDeadlineExceeded'] }, subjects: ['rollout'] },
    ])
    .describe('incident fields -> boot.yml subjects (the defaults match the shipped boot.yml)'),
  eval: z
    .strictObject({
      judge: z
        .strictObject({
          provider: z
            .enum(['anthropic', 'openai'])
            .default('anthropic')
            .describe('anthropic: the Messages API; openai: an OpenAI-compatible /chat/completions endpoint'),
          model: z.string().min(1).default('claude-sonnet-4-5').describe('the judge model'),
          base_url: z
            .string()
            .url()
            .optional()
            .describe('API base URL (absent: the provider endpoint from providers:, else the public API)'),
          secret: z
            .string()
            .regex(/^[A-Z_][A-Z0-9_]*$/, 'a name under secrets:')
            .default('ANTHROPIC_API_KEY')
            .describe('the secrets: entry holding the API key'),
          timeout: duration('60s', 'one judge request'),
          max_tokens: int(64, 32_000).default(1024).describe('longest judge answer'),
        })
        .prefault({})
        .describe('the optional LLM judge of `eval --judge` (off unless --judge is given)'),
    })
    .prefault({})
    .describe('eval command'),
  evidence: z
    .strictObject({
      verify: z
        .enum(['off', 'model'])
        .default('off')
        .describe(
          'a second reader after the deterministic evidence check: model sends each claim with 2 KB of the output it cites through the model gateway; it can only lower the verdict',
        ),
      provider: z
        .enum(['anthropic', 'openai'])
        .default('anthropic')
        .describe(
          'anthropic: the Messages API; openai: /chat/completions (through the gateway, with its key)',
        ),
      model: z.string().min(1).default('claude-haiku-4-5').describe('the model that reads the claims'),
      timeout: duration('30s', 'one claim read by the model'),
      max_claims: int(1, 200)
        .default(20)
        .describe('claims the model reads per run: the headline and the chain behind it first'),
    })
    .prefault({})
    .describe('the evidence check of every report against the cluster output it cites'),
  notify: z
    .strictObject({
      sinks: z
        .array(notifySink)
        .default([])
        .describe('where finished investigations are delivered; each credential is named under secrets:'),
      retry: z
        .strictObject({
          max_attempts: int(1, 1000)
            .default(12)
            .describe('tries per delivery before it is recorded as failed'),
          base_delay: duration('5s', 'first retry delay; doubles each attempt, with jitter'),
          max_delay: duration('10m', 'longest retry delay (a longer Retry-After is still honoured)'),
        })
        .prefault({})
        .describe('delivery retries; the schedule is kept in the outbox and survives restarts'),
      request_timeout: duration('15s', 'limit of one HTTP request to a sink'),
      catch_up_window: duration(
        '24h',
        'at start-up, an incident that finished this recently with no recorded deliveries is delivered',
      ),
      max_report_bytes: bytes('1MiB', 'report text sent to a sink; a longer report is cut, and says so'),
    })
    .prefault({})
    .describe('results out: Slack, webhooks, PagerDuty'),
  http: z
    .strictObject({
      public_url: httpUrl(
        "URL people reach this daemon's HTTP server at (status page); notifications link to it",
      ).optional(),
      port: int(0, 65535)
        .default(8742)
        .describe('HTTP port for /healthz, /readyz, /metrics and /v1/* (0 = disabled)'),
      host: z
        .string()
        .min(1)
        .default('127.0.0.1')
        .describe(
          'listen address; anything but loopback requires the HTTP_TOKEN secret (bearer auth on /v1/*)',
        ),
      body_limit: bytes('1MiB', 'largest request body accepted (413 above)'),
      json_depth: int(1, 1000)
        .default(64)
        .describe('deepest JSON nesting accepted in a request body (400 above)'),
      rate_limit: z
        .strictObject({
          max: int(0, 10_000_000)
            .default(600)
            .describe('requests per client address per window (429 with Retry-After above; 0 = no limit)'),
          window: duration('1m', 'the rate-limit window'),
        })
        .prefault({})
        .describe('per-client rate limit; /healthz, /readyz and /metrics are never limited'),
      request_timeout: duration('30s', 'a request (headers and body) must arrive within this time'),
      max_connections: int(1, 1_000_000)
        .default(512)
        .describe('open connections at once, server-wide; more are closed on arrival'),
      allowed_hosts: z
        .array(z.string().trim().min(1))
        .default([])
        .describe(
          'Host names a server without HTTP_TOKEN answers besides localhost/127.0.0.1 (DNS-rebinding defence); http.public_url is added',
        ),
    })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
      format: z
        .enum(['auto', 'json', 'pretty'])
        .default('auto')
        .describe('json: one object per line; pretty: for people; auto: pretty when stderr is a terminal'),
    })
    .prefault({}),
});

export const configSchema = baseSchema
  // Runs even when other keys have problems, so that validation reports every problem at once.
  .superRefine(checkNotifySinks, { when: (payload) => isRecord(payload.value) })
  .superRefine(checkClusters, { when: (payload) => isRecord(payload.value) })
  .superRefine(checkPrometheus, { when: (payload) => isRecord(payload.value) });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sink names are unique and every credential a sink names is declared under `secrets:`. */
function checkNotifySinks(config: unknown, ctx: z.RefinementCtx): void {
  if (!isRecord(config) || !isRecord(config.notify) || !Array.isArray(config.notify.sinks)) return;
  const declared = { ...BUILTIN_SECRETS, ...(isRecord(config.secrets) ? config.secrets : {}) };
  const seen = new Set<string>();
  config.notify.sinks.forEach((sink: unknown, i) => {
    if (!isRecord(sink)) return;
    const at = (...rest: string[]) => ['notify', 'sinks', i, ...rest];
    if (typeof sink.name === 'string') {
      if (seen.has(sink.name))
        ctx.addIssue({ code: 'custom', path: at('name'), message: `sink name ${sink.name} is used twice` });
      seen.add(sink.name);
    }
    const named: [(string | number)[], unknown][] = [
      [at('secret'), sink.secret],
      [at('notes', 'secret'), isRecord(sink.notes) ? sink.notes.secret : undefined],
    ];
    for (const [path, name] of named) {
      if (typeof name !== 'string' || !SECRET_NAME.test(name) || name in declared) continue;
      ctx.addIssue({
        code: 'custom',
        path,
        message: `${name} is not declared under secrets:; add \`${name}: { env: ${name} }\` (or file: PATH) there`,
      });
    }
  });
}

/** Each Prometheus endpoint's secrets are declared; `prometheus:` is not beside a registry. */
function checkPrometheus(config: unknown, ctx: z.RefinementCtx): void {
  if (!isRecord(config)) return;
  const declared = new Set(
    Object.keys({ ...BUILTIN_SECRETS, ...(isRecord(config.secrets) ? config.secrets : {}) }),
  );
  for (const issue of prometheusIssues(config, declared)) ctx.addIssue({ code: 'custom', ...issue });
}

/** Registry names and aliases each name one cluster; default_cluster names an entry and is set when needed. */
function checkClusters(config: unknown, ctx: z.RefinementCtx): void {
  if (!isRecord(config)) return;
  const clusters = isRecord(config.clusters) ? config.clusters : undefined;
  const names = new Set(clusters ? Object.keys(clusters) : []);
  const owner = new Map<string, string>();
  for (const name of names)
    if (!CLUSTER_NAME.test(name))
      ctx.addIssue({
        code: 'custom',
        path: ['clusters', name],
        message: `cluster name ${JSON.stringify(name)} is not usable in metrics labels and Secret names; use ${CLUSTER_NAME_RULE} (put the other spelling in aliases:)`,
      });
  for (const [name, entry] of Object.entries(clusters ?? {})) {
    if (!isRecord(entry) || !Array.isArray(entry.aliases)) continue;
    entry.aliases.forEach((alias: unknown, i) => {
      if (typeof alias !== 'string') return;
      const taken = names.has(alias) && alias !== name ? `the registry entry ${alias}` : owner.get(alias);
      if (taken !== undefined || alias === name) {
        ctx.addIssue({
          code: 'custom',
          path: ['clusters', name, 'aliases', i],
          message:
            alias === name
              ? `alias ${alias} is the entry's own name; remove it`
              : `alias ${alias} already names ${taken}; each alias may name one cluster`,
        });
        return;
      }
      owner.set(alias, `an alias of ${name}`);
    });
  }
  const fallback = config.default_cluster;
  if (typeof fallback === 'string') {
    if (!clusters)
      ctx.addIssue({
        code: 'custom',
        path: ['default_cluster'],
        message: 'default_cluster needs a clusters: registry to name an entry of',
      });
    else if (!names.has(fallback))
      ctx.addIssue({
        code: 'custom',
        path: ['default_cluster'],
        message: `default_cluster ${fallback} is not a registry entry (known: ${[...names].join(', ') || 'none'})`,
      });
  }
  if (config.unknown_cluster === 'default' && clusters && typeof fallback !== 'string')
    ctx.addIssue({
      code: 'custom',
      path: ['default_cluster'],
      message:
        'unknown_cluster is default but default_cluster is not set; name the entry unknown clusters go to',
    });
  if (clusters && names.size === 0)
    ctx.addIssue({
      code: 'custom',
      path: ['clusters'],
      message: 'the cluster registry is empty; add an entry or remove clusters:',
    });
  if (clusters && typeof config.kubeconfig === 'string')
    ctx.addIssue({
      code: 'custom',
      path: ['kubeconfig'],
      message: 'kubeconfig and clusters: are both set; move the kubeconfig into a clusters: entry',
    });
  const kubectl = isRecord(config.kubectl) ? config.kubectl : {};
  if (clusters && typeof kubectl.kubeconfig === 'string')
    ctx.addIssue({
      code: 'custom',
      path: ['kubectl', 'kubeconfig'],
      message:
        "kubectl.kubeconfig (the broker's own identity) and clusters: are both set; with a registry, each entry's kubeconfig is the one the broker uses: give each entry its read-only identity",
    });
}

export type Config = z.infer<typeof configSchema>;

/** Whether finished runs stay on the engine: `keep_runs`, or its old name `docker.keep_containers`. */
export const keepRuns = (config: Pick<Config, 'keep_runs' | 'docker'>): boolean =>
  config.keep_runs || config.docker.keep_containers;
export type ConfigInput = z.input<typeof configSchema>;
