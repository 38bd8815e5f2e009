import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../src/log/redact.js';

// What a run sees of Kubernetes objects, in the forms kubectl prints them (copied from kubectl 1.32's
// output): a Secret's data goes value by value with its keys kept; credential-named values spanning
// lines go whole; ordinary objects, and base64 that is not a Secret's, stay as they are.

const redact = (text: string) => new Redactor().redact(text);
const PW = 'SHVudGVyMi1wcm9kLXB3IQ==';
const DSN = 'cG9zdGdyZXM6Ly9wYXltZW50czpQZy1zM2NyZXQtOUBkYi5wYXltZW50czo1NDMyL29yZGVycw==';

const SECRET_YAML = `apiVersion: v1
data:
  DATABASE_URL: ${DSN}
  password: ${PW}
  username: cGF5bWVudHM=
kind: Secret
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","data":{"DATABASE_URL":"${DSN}","password":"${PW}"},"kind":"Secret","metadata":{"name":"payments-db","namespace":"payments"},"type":"Opaque"}
  creationTimestamp: "2026-11-26T09:00:00Z"
  name: payments-db
  namespace: payments
  resourceVersion: "918273"
  uid: 6f1c2a4e-9b1d-4c8e-8f3a-2d5e7b9c1000
type: Opaque
`;

const SECRET_JSON = `{
    "apiVersion": "v1",
    "data": {
        "DATABASE_URL": "${DSN}",
        "password": "${PW}"
    },
    "kind": "Secret",
    "metadata": {
        "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": "{\\"apiVersion\\":\\"v1\\",\\"data\\":{\\"password\\":\\"${PW}\\"},\\"kind\\":\\"Secret\\",\\"type\\":\\"Opaque\\"}\\n"
        },
        "name": "payments-db",
        "resourceVersion": "918273"
    },
    "type": "Opaque"
}
`;

describe('Secret data in kubectl output', () => {
  it('redacts every value of `kubectl get secret -o yaml`, the last-applied copy too, keeping keys and metadata', () => {
    const out = redact(SECRET_YAML);
    expect(out).not.toContain(PW);
    expect(out).not.toContain(DSN);
    expect(out).not.toContain('cGF5bWVudHM=');
    expect(out).toContain(
      'data:\n  DATABASE_URL: [REDACTED]\n  password: [REDACTED]\n  username: [REDACTED]\nkind: Secret',
    );
    expect(out).toContain(
      '{"apiVersion":"v1","data":{"DATABASE_URL":"[REDACTED]","password":"[REDACTED]"},"kind":"Secret"',
    );
    expect(out).toContain('uid: 6f1c2a4e-9b1d-4c8e-8f3a-2d5e7b9c1000');
    expect(out).toContain('resourceVersion: "918273"');
  });

  it('redacts `-o json`, including the escaped last-applied annotation, and leaves valid JSON', () => {
    const out = redact(SECRET_JSON);
    expect(out).not.toContain(PW);
    expect(out).not.toContain(DSN);
    const parsed = JSON.parse(out) as {
      data: Record<string, string>;
      metadata: { annotations: Record<string, string> };
    };
    expect(parsed.data).toEqual({ DATABASE_URL: '[REDACTED]', password: '[REDACTED]' });
    const applied = JSON.parse(
      parsed.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] ?? '',
    ) as { data: unknown };
    expect(applied.data).toEqual({ password: '[REDACTED]' });
  });

  it('redacts the Secrets of a List and leaves the ConfigMap beside them alone', () => {
    const list = `apiVersion: v1
items:
- apiVersion: v1
  data:
    config.yaml: YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==
  kind: ConfigMap
  metadata:
    name: app-config
- apiVersion: v1
  data:
    password: ${PW}
  kind: Secret
  metadata:
    name: payments-db
  type: Opaque
- apiVersion: v1
  kind: Secret
  metadata:
    name: tls
  stringData:
    tls.key: |
      -----BEGIN RSA PRIVATE KEY-----
      MIIEpAIBAAKCAQEA
      -----END RSA PRIVATE KEY-----
  type: kubernetes.io/tls
kind: List
`;
    const out = redact(list);
    expect(out).toContain('    config.yaml: YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==\n');
    expect(out).toContain('  data:\n    password: [REDACTED]\n  kind: Secret');
    expect(out).toContain('  stringData:\n    tls.key: [REDACTED]\n  type: kubernetes.io/tls');
    expect(out).not.toContain('MIIEpAIBAAKCAQEA');
  });

  it('redacts a Secret cut off before its `kind:` (an output cut at its bound) in a text that shows Secrets', () => {
    const cut = `items:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: a\n- apiVersion: v1\n  data:\n    DATABASE_URL: ${DSN}\n    password: ${PW}\n`;
    expect(redact(cut)).toBe(
      'items:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: a\n- apiVersion: v1\n  data:\n    DATABASE_URL: [REDACTED]\n    password: [REDACTED]\n',
    );
  });

  it('redacts a compact Secret on one line (`jq -c`), leaving a compact ConfigMap alone', () => {
    const secret = `{"apiVersion":"v1","data":{"password":"${PW}","user":"YXBw"},"kind":"Secret"}`;
    expect(redact(secret)).toBe(
      '{"apiVersion":"v1","data":{"password":"[REDACTED]","user":"[REDACTED]"},"kind":"Secret"}',
    );
    const cm =
      '{"apiVersion":"v1","data":{"blob":"YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg=="},"kind":"ConfigMap"}';
    expect(redact(cm)).toBe(cm);
  });

  it('redacts a Secret inside a JSON string (a stream-json tool result) and inside a string inside one (a recorded request body)', () => {
    const line = JSON.stringify({ type: 'tool_result', content: SECRET_YAML });
    const once = redact(line);
    expect(once).not.toContain(PW);
    expect((JSON.parse(once) as { content: string }).content).toBe(redact(SECRET_YAML));
    const record = JSON.stringify({
      status: 200,
      request: JSON.stringify({ messages: [{ content: SECRET_YAML }] }),
    });
    const twice = redact(record);
    expect(twice).not.toContain(PW);
    expect(twice).not.toContain(DSN);
    const body = JSON.parse((JSON.parse(twice) as { request: string }).request) as {
      messages: { content: string }[];
    };
    expect(body.messages[0]?.content).toContain('  password: [REDACTED]\n');
  });

  it('keeps `kubectl describe secret` (key sizes only) as it is', () => {
    const describe =
      'Name:         payments-db\nNamespace:    payments\n\nType:  Opaque\n\nData\n====\npassword:      16 bytes\nusername:      8 bytes\n';
    expect(redact(describe)).toBe(describe);
  });
});

describe('ConfigMaps and pod specs', () => {
  const CONFIG_MAP = `apiVersion: v1
data:
  DB_HOST: db.payments.svc.cluster.local
  LOG_LEVEL: debug
  app.properties: |
    server.port=8080
    stripe.api.key=sk_live_51HxYzAbCdEfGh12345678IjKlMn
  config.yaml: YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==
  credentials.json: |
    {
      "type": "service_account",
      "private_key_id": "0123456789abcdef"
    }
  stripe_key: sk_live_51HxYzAbCdEfGh12345678IjKlMn
kind: ConfigMap
`;

  it('redacts the Stripe key and the credentials file of a ConfigMap, and only them', () => {
    expect(redact(CONFIG_MAP)).toBe(`apiVersion: v1
data:
  DB_HOST: db.payments.svc.cluster.local
  LOG_LEVEL: debug
  app.properties: |
    server.port=8080
    stripe.api.key=[REDACTED]
  config.yaml: YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==
  credentials.json: [REDACTED]
  stripe_key: [REDACTED]
kind: ConfigMap
`);
  });

  it('redacts credential-named entries of `kubectl describe configmap`, up to the next entry', () => {
    const describe =
      'Data\n====\nDB_PASSWORD:\n----\nHunter2 prod, pw\n\nLOG_LEVEL:\n----\ndebug\n\ncredentials.json:\n----\n{\n  "a": "b"\n}\n\n\nBinaryData\n====\n\nEvents:  <none>\n';
    expect(redact(describe)).toBe(
      'Data\n====\nDB_PASSWORD:\n----\n[REDACTED]\n\nLOG_LEVEL:\n----\ndebug\n\ncredentials.json:\n----\n[REDACTED]\n\n\nBinaryData\n====\n\nEvents:  <none>\n',
    );
  });

  it('redacts a pod env DB_PASSWORD whatever its value holds (commas, colons, quotes), in YAML, JSON and describe', () => {
    const yaml = `    - env:\n      - name: DB_PASSWORD\n        value: 'p@ss,w0rd: x9'\n      - name: DB_PASS\n        value: Hunter2-prod-pw!\n      - name: LOG_LEVEL\n        value: info\n`;
    expect(redact(yaml)).toBe(
      `    - env:\n      - name: DB_PASSWORD\n        value: '[REDACTED]'\n      - name: DB_PASS\n        value: [REDACTED]\n      - name: LOG_LEVEL\n        value: info\n`,
    );
    const json = '{\n    "name": "DB_PASSWORD",\n    "value": "p@ss,w0rd: x9"\n}';
    expect(redact(json)).toBe('{\n    "name": "DB_PASSWORD",\n    "value": "[REDACTED]"\n}');
    const describe =
      '    Environment:\n      DB_PASSWORD:            p@ss,w0rd: x9\n      LOG_LEVEL:              info\n';
    expect(redact(describe)).toBe(
      '    Environment:\n      DB_PASSWORD:            [REDACTED]\n      LOG_LEVEL:              info\n',
    );
  });

  it('redacts a multi-line env value under a credential name, keeping the next entry', () => {
    const yaml =
      '      - name: SIGNING_PRIVATE_KEY\n        value: |\n          MIIEpAIBAAKCAQEAx9\n          Zm9vYmFyYmF6\n      - name: LOG_LEVEL\n        value: info\n';
    expect(redact(yaml)).toBe(
      '      - name: SIGNING_PRIVATE_KEY\n        value: [REDACTED]\n      - name: LOG_LEVEL\n        value: info\n',
    );
  });

  it('keeps ordinary pod YAML whole: digests, UIDs, hashes, Secret references, base64 annotations', () => {
    const pod = `apiVersion: v1
kind: Pod
metadata:
  annotations:
    checksum/config: 0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31
    example.com/build-info: eyJjb21taXQiOiI0ZjUzY2RhMThjMmIiLCJidWlsZGVyIjoiY2ktMCJ9
  labels:
    pod-template-hash: 7c9d8f6b5d
  name: payments-api-7c9d8f6b5d-x2k9q
  resourceVersion: "918273"
  uid: 6f1c2a4e-9b1d-4c8e-8f3a-2d5e7b9c1000
spec:
  containers:
  - env:
    - name: DB_PASSWORD
      valueFrom:
        secretKeyRef:
          key: password
          name: payments-db
    - name: DB_PASSWORD_FILE
      value: /var/run/secrets/db/password
    - name: TOKEN_TTL
      value: "3600"
    image: registry.example.com/payments/api@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945
  volumes:
  - name: db-credentials
    secret:
      defaultMode: 420
      secretName: payments-db
status:
  containerStatuses:
  - containerID: containerd://9e0f1a2b3c4dab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef569e0f1a
    imageID: registry.example.com/payments/api@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945
    state:
      waiting:
        message: back-off 5m0s restarting failed container
        reason: CrashLoopBackOff
`;
    expect(redact(pod)).toBe(pod);
  });

  it('keeps base64 data of an object that is not a Secret, and `data:` of a closed non-Kubernetes map', () => {
    const values =
      'cache:\n  data:\n    seed: YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==\n  size: 10\nother: 1\n';
    expect(redact(values)).toBe(values);
    const binary = 'apiVersion: v1\nbinaryData:\n  logo.png: iVBORw0KGgoAAAANSUhEUgAAAAE=\nkind: ConfigMap\n';
    expect(redact(binary)).toBe(binary);
  });
});
