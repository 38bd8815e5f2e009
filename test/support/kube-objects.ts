// Kubernetes objects that hold credentials (a Secret, a ConfigMap with a Stripe key, a Deployment's pod
// with a literal DB_PASSWORD) and ordinary pods full of look-alikes (image digests, UIDs, hashes,
// base64 annotations, Secret references), served by the stand-in API server so that the real kubectl
// prints them: what a run records is kubectl's own output, not a hand-written imitation of it.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startStandInApiServer, type StandInApiServer } from './stand-in-apiserver.js';

export const KUBECTL = process.env.TRIAGE_TEST_KUBECTL ?? 'kubectl';

/** The credentials planted below: none of them may be left in anything stored or sent. */
export const PLANTED = {
  dbPassword: 'Hunter2-prod-pw!',
  commaPassword: 'p@ss,w0rd: x9',
  stripeKey: 'sk_live_51HxYzAbCdEfGh12345678IjKlMn',
  awsKeyId: 'AKIAIOSFODNN7EXAMPLE',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  dsnPassword: 'Pg-s3cret-9',
  githubToken: 'ghp_0123456789abcdefghijABCDEFGHIJ012345',
};

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Every planted credential in each form it may take in an output: as is, and base64 (a Secret's data). */
export function plantedForms(): string[] {
  return Object.values(PLANTED).flatMap((v) => [v, b64(v)]);
}

const meta = (name: string, i = 0) => ({
  name,
  namespace: 'payments',
  uid: `6f1c2a4e-9b1d-4c8e-8f3a-2d5e7b9c${String(1000 + i).padStart(4, '0')}`,
  resourceVersion: String(918_273 + i),
  creationTimestamp: '2026-11-26T09:00:00Z',
});

/** A Secret as `kubectl apply` leaves it: the data, and the same data again in the last-applied annotation. */
export function dbSecret(): object {
  const data = {
    password: b64(PLANTED.dbPassword),
    username: b64('payments'),
    DATABASE_URL: b64(`postgres://payments:${PLANTED.dsnPassword}@db.payments:5432/orders`),
    'aws-credentials': b64(`[default]\naws_access_key_id=${PLANTED.awsKeyId}\n`),
  };
  const applied = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'payments-db', namespace: 'payments' },
    data,
    type: 'Opaque',
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      ...meta('payments-db'),
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(applied)}\n` },
    },
    data,
  };
}

/** A ConfigMap holding a Stripe key and a credentials file next to ordinary settings. */
export function paymentsConfig(): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta('payments-config', 1),
    data: {
      LOG_LEVEL: 'debug',
      DB_HOST: 'db.payments.svc.cluster.local',
      stripe_key: PLANTED.stripeKey,
      'app.properties': `server.port=8080\nstripe.api.key=${PLANTED.stripeKey}\nfeature.flags=checkout-v2\n`,
      'credentials.json': `{\n  "type": "service_account",\n  "token": "${PLANTED.githubToken}"\n}\n`,
      'config.yaml': b64('apiVersion: v1\nkind: Config\n'),
    },
  };
}

const podHash = (i: number) => (i * 2654435761).toString(16).padStart(10, '0').slice(0, 10);

/** The name of `pod(i)`. */
export const podName = (i: number) => `payments-api-7c9d8f6b5d-${podHash(i).slice(0, 5)}`;

/**
 * A pod as a cluster shows it: owner, labels, a config checksum annotation, image digests, env taken
 * from Secrets by reference, Secret and projected-token volumes; with `literalPassword`, the mistake
 * that leaks: DB_PASSWORD written into the spec.
 */
export function pod(i: number, literalPassword = false): object {
  const hash = podHash(i);
  const name = podName(i);
  const env: object[] = [
    { name: 'LOG_LEVEL', value: 'info' },
    { name: 'DB_HOST', value: 'db.payments.svc.cluster.local' },
    { name: 'DB_PASSWORD_FILE', value: '/var/run/secrets/db/password' },
    { name: 'TOKEN_TTL', value: '3600' },
    { name: 'DB_USER', valueFrom: { secretKeyRef: { name: 'payments-db', key: 'username' } } },
  ];
  if (literalPassword)
    env.push(
      { name: 'DB_PASSWORD', value: PLANTED.commaPassword },
      { name: 'DB_PASS', value: PLANTED.dbPassword },
      { name: 'STRIPE_SECRET', value: PLANTED.stripeKey },
      { name: 'AWS_ACCESS_KEY_ID', value: PLANTED.awsKeyId },
      { name: 'AWS_SECRET_ACCESS_KEY', value: PLANTED.awsSecret },
    );
  else
    env.push({ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'payments-db', key: 'password' } } });
  const digest = `sha256:${(i + 1).toString(16).padStart(8, '0')}4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f1116`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta(name, i),
      generateName: 'payments-api-7c9d8f6b5d-',
      labels: { app: 'payments-api', 'pod-template-hash': '7c9d8f6b5d' },
      annotations: {
        'checksum/config': '0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31',
        'example.com/build-info': b64(`{"commit":"4f53cda18c2b","builder":"ci-${i}"}`),
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'payments-api-7c9d8f6b5d',
          uid: '0a11c2d3-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'api',
          image: `registry.example.com/payments/api@${digest}`,
          env,
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { limits: { memory: '512Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
          volumeMounts: [
            { name: 'db-credentials', mountPath: '/var/run/secrets/db', readOnly: true },
            {
              name: 'kube-api-access-x7k2p',
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              readOnly: true,
            },
          ],
        },
      ],
      nodeName: `node-${i % 7}`,
      serviceAccountName: 'payments-api',
      volumes: [
        { name: 'db-credentials', secret: { secretName: 'payments-db', defaultMode: 420 } },
        {
          name: 'kube-api-access-x7k2p',
          projected: {
            sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }],
            defaultMode: 420,
          },
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: `10.0.${i % 250}.${(i * 7) % 250}`,
      containerStatuses: [
        {
          name: 'api',
          image: `registry.example.com/payments/api@${digest}`,
          imageID: `registry.example.com/payments/api@${digest}`,
          containerID: `containerd://${hash}${'ab12cd34ef56'.repeat(4)}${hash.slice(0, 6)}`,
          ready: false,
          restartCount: 14 + i,
          lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: '2026-11-26T09:50:00Z' } },
          state: {
            waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' },
          },
        },
      ],
    },
  };
}

/** Pods enough to make about `bytes` of `kubectl get pods -o yaml`. */
export const podsForBytes = (bytes: number): object[] =>
  Array.from({ length: Math.ceil(bytes / 3000) }, (_, i) => pod(i));

/** A stand-in API server serving `objects`, and a `kubectl` that talks to it. */
export interface StandInCluster {
  server: StandInApiServer;
  kubeconfig: string;
  /** Runs the real kubectl against the stand-in; resolves to its stdout (rejects on a failure). */
  kubectl(args: string[]): Promise<string>;
  close(): Promise<void>;
}

export async function standInCluster(
  dir: string,
  objects: Partial<Record<string, { metadata: { name: string } }[]>>,
): Promise<StandInCluster> {
  const server = await startStandInApiServer({ objects });
  const kubeconfig = path.join(dir, 'kubeconfig.yaml');
  await writeFile(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server.url}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u, namespace: payments}}]\ncurrent-context: c\n`,
  );
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig };
  return {
    server,
    kubeconfig,
    kubectl: (args) =>
      new Promise((resolve, reject) =>
        execFile(KUBECTL, args, { env, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
          err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
        ),
      ),
    close: () => server.close(),
  };
}

/** The objects every redaction test serves. */
export const clusterObjects = (pods: object[] = [pod(0, true), pod(1)]) => ({
  secrets: [dbSecret()] as { metadata: { name: string } }[],
  configmaps: [paymentsConfig()] as { metadata: { name: string } }[],
  pods: pods as { metadata: { name: string } }[],
});
