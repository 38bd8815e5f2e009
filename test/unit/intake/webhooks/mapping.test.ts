import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../../src/config/schema.js';
import { faultTypeOf } from '../../../../src/intake/webhooks/fault-types.js';
import { deploymentOfPod, fieldsOf, groupOf } from '../../../../src/intake/webhooks/mapping.js';
import { folderName } from '../../../../src/intake/webhooks/names.js';
import { groupingOptions } from '../../../../src/server/routes/intake.js';

const options = groupingOptions(configSchema.parse({}));

// Labels as the kube-prometheus (kubernetes-mixin) rules and kube-state-metrics produce them.
const KSM = { job: 'kube-state-metrics', instance: '10.0.0.5:8080', service: 'kube-state-metrics' };

describe('alert labels -> incident fields (kube-prometheus rules)', () => {
  it.each([
    [
      'KubePodCrashLooping',
      { namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k', container: 'app', reason: 'CrashLoopBackOff' },
      'CrashLoop',
      { kind: 'Pod', name: 'web-7d4b9c8f6d-x2x9k' },
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'KubePodNotReady',
      { namespace: 'shop', pod: 'db-0' },
      'Pending',
      { kind: 'Pod', name: 'db-0' },
      { kind: 'Pod', name: 'db-0' },
    ],
    [
      'KubeContainerWaiting',
      { namespace: 'shop', pod: 'web-5d59d67564-q2w4z', container: 'app', reason: 'ImagePullBackOff' },
      'ImagePullBackOff',
      { kind: 'Pod' },
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'KubeContainerWaiting',
      { namespace: 'shop', pod: 'web-5d59d67564-q2w4z', container: 'app', reason: 'ContainerCreating' },
      'Pending',
      { kind: 'Pod' },
      { kind: 'Deployment' },
    ],
    [
      'KubeDeploymentReplicasMismatch',
      { namespace: 'shop', deployment: 'checkout' },
      'FailedRollout',
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout', namespace: 'shop' },
      { kind: 'Deployment', name: 'checkout' },
    ],
    [
      'KubeDeploymentRolloutStuck',
      { namespace: 'shop', deployment: 'checkout', condition: 'Progressing' },
      'ProgressDeadlineExceeded',
      { kind: 'Deployment', name: 'checkout' },
      { kind: 'Deployment', name: 'checkout' },
    ],
    [
      'KubeStatefulSetReplicasMismatch',
      { namespace: 'data', statefulset: 'pg' },
      'FailedRollout',
      { kind: 'StatefulSet', name: 'pg' },
      { kind: 'StatefulSet', name: 'pg' },
    ],
    [
      'KubeDaemonSetRolloutStuck',
      { namespace: 'kube-system', daemonset: 'fluent-bit' },
      'FailedRollout',
      { kind: 'DaemonSet', name: 'fluent-bit' },
      { kind: 'DaemonSet' },
    ],
    [
      'KubeJobFailed',
      { namespace: 'batch', job_name: 'backup-29384756' },
      'JobFailed',
      { apiVersion: 'batch/v1', kind: 'Job', name: 'backup-29384756' },
      { kind: 'Job', name: 'backup-29384756' },
    ],
    [
      'KubePersistentVolumeFillingUp',
      { namespace: 'data', persistentvolumeclaim: 'pg-data-pg-0' },
      'VolumeFillingUp',
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'pg-data-pg-0', namespace: 'data' },
      { kind: 'PersistentVolumeClaim' },
    ],
    [
      'KubeNodeNotReady',
      { node: 'worker-3', condition: 'Ready' },
      'NodeNotReady',
      { apiVersion: 'v1', kind: 'Node', name: 'worker-3' },
      { kind: 'Node', name: 'worker-3' },
    ],
    [
      'KubeContainerOOMKilled',
      { namespace: 'shop', pod: 'api-6f7c8d9b4c-zzkk2', container: 'api' },
      'OOMKilled',
      { kind: 'Pod' },
      { kind: 'Deployment', name: 'api' },
    ],
    [
      'SomethingCustom',
      { namespace: 'shop' },
      'SomethingCustom',
      { kind: 'Namespace', name: 'shop' },
      { kind: 'Namespace', name: 'shop' },
    ],
  ])('%s %j -> %s', (alertname, labels, faultType, resource, workload) => {
    const fields = fieldsOf({ ...KSM, alertname, severity: 'warning', ...labels }, {}, options);
    expect(fields.faultType).toBe(faultType);
    expect(fields.resource).toMatchObject(resource);
    expect(fields.workload).toMatchObject(workload);
  });

  it('reads cluster, namespace, severity and context, with defaults when labels are missing', () => {
    const fields = fieldsOf(
      {
        alertname: 'KubePodCrashLooping',
        cluster_name: 'eu-1',
        namespace: 'shop',
        pod: 'p',
        severity: 'CRITICAL',
      },
      { summary: ' Pod is crash looping. ', description: 'Pod shop/p restarts.', runbook_url: 'https://r/x' },
      options,
    );
    expect(fields).toMatchObject({
      cluster: 'eu-1',
      namespace: 'shop',
      severity: 'critical',
      summary: 'Pod is crash looping.',
      description: 'Pod shop/p restarts.',
      runbookUrl: 'https://r/x',
    });
    const bare = fieldsOf({}, {}, options);
    expect(bare).toMatchObject({
      alertname: 'UnnamedAlert',
      cluster: 'default',
      namespace: 'default',
      severity: 'warning',
      resource: { kind: 'Cluster', name: 'default' },
    });
  });

  it('uses owner labels when a rule joins kube_pod_owner in, over the pod name', () => {
    const fields = fieldsOf(
      {
        alertname: 'X',
        namespace: 'n',
        pod: 'web-7d4b9c8f6d-x2x9k',
        owner_kind: 'ReplicaSet',
        owner_name: 'web-7d4b9c8f6d',
      },
      {},
      options,
    );
    expect(fields.workload).toMatchObject({ kind: 'Deployment', name: 'web' });
  });

  it('treats the `job` label as the scrape job, never as a Kubernetes Job', () => {
    expect(
      fieldsOf({ alertname: 'X', namespace: 'n', job: 'kube-state-metrics' }, {}, options).resource.kind,
    ).toBe('Namespace');
  });
});

describe('owning Deployment from a pod name', () => {
  it.each([
    ['web-7d4b9c8f6d-x2x9k', 'web'],
    ['payments-api-5d59d67564-abcde', undefined], // "abcde" has vowels: not a pod suffix
    ['payments-api-5d59d67564-bcdfg', 'payments-api'],
    ['coredns-787d4945fb-l85r5', 'coredns'],
    ['db-0', undefined], // StatefulSet ordinal
    ['fluent-bit-7xk2p', undefined], // DaemonSet pod: no ReplicaSet hash
    ['backup-28456789-k2x9z', undefined], // CronJob's Job: minutes start with 2, not a hash character
    ['backup-29384756-k2x9z', undefined],
    ['web-12345678-x2x9k', undefined], // 1, 2, 3 never appear in a pod-template-hash
  ])('%s -> %s', (pod, deployment) => {
    expect(deploymentOfPod(pod)).toBe(deployment);
  });
});

describe('fault types', () => {
  it('configured entries win over the reason label and the built-in table; own keys only', () => {
    expect(faultTypeOf('KubePodCrashLooping', {}, { KubePodCrashLooping: 'Mine' })).toBe('Mine');
    expect(faultTypeOf('KubeContainerWaiting', { reason: 'ErrImagePull' }, {})).toBe('ErrImagePull');
    expect(faultTypeOf('constructor', {}, {})).toBe('constructor');
    expect(faultTypeOf('toString', { reason: 'hasOwnProperty' }, {})).toBe('toString');
  });
});

describe('group keys', () => {
  it('pods of one Deployment share the default group key; another alertname or namespace does not', () => {
    const key = (labels: Record<string, string>) =>
      groupOf(options.groupBy, fieldsOf(labels, {}, options), labels).key;
    const a = key({ alertname: 'KubePodCrashLooping', namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' });
    expect(key({ alertname: 'KubePodCrashLooping', namespace: 'shop', pod: 'web-7d4b9c8f6d-q2w4z' })).toBe(a);
    expect(key({ alertname: 'KubePodCrashLooping', namespace: 'shop', pod: 'web-5d59d67564-q2w4z' })).toBe(a);
    expect(key({ alertname: 'KubePodNotReady', namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' })).not.toBe(a);
    expect(
      key({ alertname: 'KubePodCrashLooping', namespace: 'cart', pod: 'web-7d4b9c8f6d-x2x9k' }),
    ).not.toBe(a);
  });
});

describe('workspace folder names from untrusted text', () => {
  it.each([
    [
      ['20261122T010203Z', 'KubePodCrashLooping', 'shop', 'web'],
      /^20261122T010203Z-KubePodCrashLooping-shop-web-abcd1234$/,
    ],
    [['../../etc', 'passwd'], /^etc-passwd-abcd1234$/],
    [['.hidden', '#x', 'a\u0000b\nc\td'], /^hidden-x-a-b-c-d-abcd1234$/],
    [['x'.repeat(500)], /^x{80}-abcd1234$/],
    [['', '..', '/', '\u202e'], /^incident-abcd1234$/],
    [['name.tmp'], /^name\.tmp-abcd1234$/],
    [['Ünïcödé-ñame'], /^Unicode-name-abcd1234$/],
  ])('%j -> %s', (parts, expected) => {
    const name = folderName(parts, 'abcd1234');
    expect(name).toMatch(expected);
    expect(name).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
    expect(name.length).toBeLessThanOrEqual(100);
  });
});
