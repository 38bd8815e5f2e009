import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { folderEscapes, readWorkspace, sha256Hex } from '../../../src/workspace/incident.js';
import { incidentJson, tempRoot } from '../../support/incidents.js';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ root, cleanup } = await tempRoot()));
afterEach(async () => cleanup());

async function folderWith(name: string, content: string | Buffer): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'incident.json'), content);
  return dir;
}

const read = (dir: string, maxBytes = 1024 * 1024) => readWorkspace(dir, { maxBytes });

describe('readWorkspace', () => {
  it('keeps unknown fields and the exact bytes of a valid incident', async () => {
    const text = JSON.stringify(
      { ...incidentJson({ incidentId: 'inc-ok' }), extraField: { a: [1, 2] } },
      null,
      4,
    );
    const dir = await folderWith('ok', text);
    await writeFile(path.join(dir, 'incident_cluster_permissions.json'), '{"can_get_pods": true}');
    const result = await read(dir);
    expect(result.kind).toBe('ok');
    if (result.kind !== 'ok') return;
    expect(result.workspace.incidentText).toBe(text);
    expect(result.workspace.incident.extraField).toEqual({ a: [1, 2] });
    expect(result.workspace.permissionsText).toBe('{"can_get_pods": true}');
    expect(result.sha256).toBe(sha256Hex(text));
  });

  it('reports invalid JSON with its line and column and how to retry', async () => {
    const dir = await folderWith('badjson', '{\n  "incidentId": "x",\n    oops\n}');
    const result = await read(dir);
    expect(result.kind).toBe('incomplete');
    if (result.kind !== 'incomplete') return;
    expect(result.reason).toMatch(/is not valid JSON \(line 3, column 5\)/);
    expect(result.reason).toMatch(/fix the file and save it again to retry/);
  });

  it('reports an empty file', async () => {
    const result = await read(await folderWith('empty', ''));
    expect(result).toMatchObject({ kind: 'incomplete', reason: expect.stringMatching(/is empty/) });
  });

  it('names the field paths of wrong types', async () => {
    const dir = await folderWith(
      'types',
      JSON.stringify(incidentJson({ cluster: 42, resource: { kind: 'Pod' } })),
    );
    const result = await read(dir);
    expect(result.kind).toBe('invalid');
    if (result.kind !== 'invalid') return;
    expect(result.reason).toMatch(/cluster: /);
    expect(result.reason).toMatch(/resource\.name: /);
  });

  it.each([
    [
      'an option-like namespace',
      { namespace: '--output-dir' },
      /namespace: "--output-dir" must be a Kubernetes namespace name \(DNS-1123 label/,
    ],
    [
      'an upper-case namespace',
      { namespace: 'Payments' },
      /namespace: "Payments" must be a Kubernetes namespace name/,
    ],
    [
      'a 64-character namespace',
      { namespace: 'a'.repeat(64) },
      /namespace: "a{64}" must be a Kubernetes namespace name/,
    ],
    [
      'a resource namespace with a space',
      { resource: { apiVersion: 'v1', kind: 'Pod', name: 'web-1', namespace: 'shop x' } },
      /resource\.namespace: "shop x" must be a Kubernetes namespace name/,
    ],
    [
      'a pod name with a slash',
      { resource: { apiVersion: 'v1', kind: 'Pod', name: '../etc', namespace: 'shop' } },
      /resource\.name: "\.\.\/etc" must be a Kubernetes object name \(DNS-1123 subdomain/,
    ],
  ])('rejects %s with the value and what a Kubernetes name looks like', async (_, fields, reason) => {
    const result = await read(await folderWith(`k8s-${Math.random()}`, JSON.stringify(incidentJson(fields))));
    expect(result).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(reason) });
    if (result.kind === 'invalid') expect(result.reason).toMatch(/save it again to retry/);
  });

  it('accepts Kubernetes names: dotted object names, RBAC path segments, cluster-scoped and non-Kubernetes resources', async () => {
    for (const resource of [
      { apiVersion: 'v1', kind: 'Node', name: 'ip-10-0-1-5.ec2.internal', namespace: '' },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'system:controller:job' },
      { kind: 'PagerDutyService', name: 'Payments API' },
    ]) {
      const result = await read(
        await folderWith(`ok-${Math.random()}`, JSON.stringify(incidentJson({ resource }))),
      );
      expect(result.kind, JSON.stringify(resource)).toBe('ok');
    }
  });

  it('rejects a file over the size limit without reading it', async () => {
    const result = await read(
      await folderWith('big', JSON.stringify(incidentJson({ pad: 'x'.repeat(5000) }))),
      1000,
    );
    expect(result).toMatchObject({
      kind: 'invalid',
      reason: expect.stringMatching(/over the 1000-byte limit \(intake\.max_incident_bytes\)/),
    });
  });

  it('rejects bytes that are not UTF-8', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"incidentId": "'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}'),
    ]);
    const result = await read(await folderWith('latin', bytes));
    expect(result).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/not valid UTF-8/) });
  });

  it('rejects a directory in place of incident.json', async () => {
    const dir = path.join(root, 'isdir');
    await mkdir(path.join(dir, 'incident.json'), { recursive: true });
    expect(await read(dir)).toMatchObject({
      kind: 'invalid',
      reason: expect.stringMatching(/is a directory/),
    });
  });

  it('never follows a symlink in place of incident.json', async () => {
    const secret = path.join(root, 'outside.json');
    await writeFile(secret, JSON.stringify(incidentJson()));
    const dir = path.join(root, 'link');
    await mkdir(dir);
    await symlink(secret, path.join(dir, 'incident.json'));
    expect(await read(dir)).toMatchObject({
      kind: 'invalid',
      reason: expect.stringMatching(/symbolic link, which is never followed/),
    });
  });

  it('rejects a hard-linked incident.json, naming the link count, the risk and the fix', async () => {
    const outside = path.join(root, 'outside.json');
    await writeFile(outside, JSON.stringify(incidentJson()));
    const dir = path.join(root, 'hardlink');
    await mkdir(dir);
    await link(outside, path.join(dir, 'incident.json'));
    expect(await read(dir)).toEqual({
      kind: 'invalid',
      reason: expect.stringMatching(
        /incident\.json in .*hardlink has a hard link count of 2: another name for the same file may edit it from outside the workspace; copy the file instead/,
      ),
    });
  });

  it('answers missing when there is no incident.json', async () => {
    await mkdir(path.join(root, 'none'));
    expect(await read(path.join(root, 'none'))).toEqual({ kind: 'missing' });
  });
});

describe('folderEscapes', () => {
  it('accepts a real folder under the root', async () => {
    await mkdir(path.join(root, 'fine'));
    expect(await folderEscapes(root, 'fine')).toBeUndefined();
  });

  it('rejects names that are not a single segment', async () => {
    expect(await folderEscapes(root, '..')).toMatch(/not a single path segment/);
    expect(await folderEscapes(root, 'a/../../etc')).toMatch(/not a single path segment/);
  });

  it('rejects a symlinked folder that points outside the root', async () => {
    const outside = await tempRoot('triage-outside-');
    try {
      await symlink(outside.root, path.join(root, 'escape'));
      expect(await folderEscapes(root, 'escape')).toMatch(/outside the workspaces root/);
    } finally {
      await outside.cleanup();
    }
  });
});
