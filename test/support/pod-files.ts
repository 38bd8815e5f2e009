// An agent Job's init container run as a host process: the Job's own command and environment, with a
// folder standing for the pod's emptyDir and the token from the run's Secret in the fake API server. It
// fetches the run's files from the daemon's pod port; each of the Job's subPath mounts is then that
// folder's path of the same name. For tests that play a pod without the agent image.
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import { ENV, OUTPUTS_PATH, TOKEN_KEY, headerOf } from '../../src/engines/kubernetes/files/protocol.js';
import type { FakeKubeApi } from './fake-kube-api.js';

const run = promisify(execFile);

interface InitContainer {
  command: string[];
  env: { name: string; value?: string }[];
}

/** Fetches the Job's run files into `dir` (created); throws with the program's output when it fails. */
export async function fetchPodFiles(api: FakeKubeApi, job: unknown, dir: string): Promise<void> {
  const j = job as {
    metadata: { name: string; namespace: string };
    spec: { template: { spec: { initContainers: InitContainer[] } } };
  };
  const init = j.spec.template.spec.initContainers[0];
  if (!init) throw new Error(`Job ${j.metadata.name} has no init container`);
  const token = api.secretValue(j.metadata.namespace, j.metadata.name, TOKEN_KEY);
  if (!token) throw new Error(`Job ${j.metadata.name} has no token Secret`);
  await mkdir(dir, { recursive: true });
  const tokenFile = `${dir}.token`;
  await writeFile(tokenFile, token, { mode: 0o600 });
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const e of init.env) if (e.value !== undefined) env[e.name] = e.value;
  env[ENV.root] = dir;
  env[ENV.tokenFile] = tokenFile;
  const [file, ...args] = init.command;
  await run(file!, args, { env }).catch((err: { stdout?: string; stderr?: string }) => {
    throw new Error(`the init container failed: ${err.stderr ?? ''}${err.stdout ?? ''}`);
  });
}

interface AgentContainer {
  env: { name: string; value?: string }[];
}

/**
 * Returns what lies in the Job's writable folders under `dir` to the daemon, as the agent container's
 * program does with its last upload (for a stand-in that wrote its files before any program watched).
 */
export async function returnPodOutputs(api: FakeKubeApi, job: unknown, dir: string): Promise<void> {
  const j = job as {
    metadata: { name: string; namespace: string };
    spec: { template: { spec: { containers: AgentContainer[] } } };
  };
  const env = Object.fromEntries(
    (j.spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
  );
  const token = api.secretValue(j.metadata.namespace, j.metadata.name, TOKEN_KEY) ?? '';
  const parts: Buffer[] = [];
  let files = 0;
  let bytes = 0;
  for (const target of JSON.parse(env[ENV.outputs] ?? '[]') as string[]) {
    const found = await readdir(path.join(dir, target), { recursive: true, withFileTypes: true }).catch(
      () => [],
    );
    for (const f of found.filter((d) => d.isFile())) {
      const full = path.join(f.parentPath, f.name);
      const data = await readFile(full);
      parts.push(headerOf({ k: 'f', p: `/${path.relative(dir, full)}`, n: data.length }), data);
      files += 1;
      bytes += data.length;
    }
  }
  parts.push(headerOf({ k: 'end', files, bytes, final: true }));
  const res = await fetch(new URL(OUTPUTS_PATH, env[ENV.url]), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: gzipSync(Buffer.concat(parts)),
  });
  if (res.status !== 200) throw new Error(`the daemon refused the upload: ${res.status} ${await res.text()}`);
}
