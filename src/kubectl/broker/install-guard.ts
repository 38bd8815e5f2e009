import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileModeFor, makeDirs } from '../../util/fs.js';
import { shellQuote } from '../parse.js';
import { SOCKET_ENV, TOKEN_FILE_ENV } from '../guard/client.js';

// Writes the guard's `kubectl` and `promql` into a folder the run puts first on the agent's PATH: sh
// wrappers that name the run's broker socket, and the client (small ES modules using node builtins
// only), so the folder also works mounted read-only into a container that has `node`. Compiled, the client's
// JavaScript is copied; from sources (tests, tsx) each module is transpiled on the spot.

const HERE = path.dirname(fileURLToPath(import.meta.url));
const COMPILED = import.meta.url.endsWith('.js');
const MODULES = ['bin', 'promql-bin', 'client', 'protocol'];

export interface GuardInstall {
  dir: string;
  /** The wrapper, `<dir>/kubectl`. */
  kubectl: string;
  /** The metrics wrapper, `<dir>/promql`. */
  promql: string;
}

/** The run token's file in the guard's folder (an agent pod's guard sends it to the pod broker). */
export const TOKEN_FILE = 'token';

export interface GuardInstallOptions {
  /** The broker's socket as the agent sees it, or the pod broker's http(s) URL. */
  socketPath: string;
  /** The broker is a URL: the wrapper hands the client `<its folder>/token`, written at the run's start. */
  withToken?: boolean;
  /** The node the wrapper runs; `node` (found on PATH) when it is not executable where the agent runs. */
  nodePath?: string;
  /** Named in the wrapper's comment. */
  runId: string;
  /**
   * A KUBECONFIG the caller is given by the daemon itself (the triage script's): unset before the call,
   * so it is not refused as a swap. Any other KUBECONFIG still is.
   */
  ownKubeconfig?: string;
}

async function readModuleSource(name: string): Promise<string> {
  const dir = path.join(HERE, '..', 'guard');
  if (COMPILED) return readFile(path.join(dir, `${name}.js`), 'utf8');
  const ts = await import('typescript');
  const source = await readFile(path.join(dir, `${name}.ts`), 'utf8');
  return ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

/**
 * The client's modules are the daemon's own installed files, the same for every run: read (from
 * sources, transpiled) once per process, then every run's guard is written from memory.
 */
const sources = new Map<string, Promise<string>>();

export function moduleSource(name: string): Promise<string> {
  let source = sources.get(name);
  if (!source) {
    source = readModuleSource(name);
    // A failed read is tried again by the next run.
    source.catch(() => sources.delete(name));
    sources.set(name, source);
  }
  return source;
}

/** Installs the guard into `dir` (created). */
export async function installGuard(dir: string, options: GuardInstallOptions): Promise<GuardInstall> {
  const lib = path.join(dir, 'lib');
  // Under a run folder the daemon's only, until the run shares it with its agent.
  makeDirs(lib);
  const mode = fileModeFor(lib);
  await Promise.all([
    ...MODULES.map(async (name) =>
      writeFile(path.join(lib, `${name}.js`), await moduleSource(name), { mode }),
    ),
    // The modules are ES modules; without this file node would read them as CommonJS.
    writeFile(path.join(lib, 'package.json'), '{ "type": "module" }\n', { mode }),
  ]);
  const target = `${SOCKET_ENV}=${shellQuote(options.socketPath)}${options.withToken ? ` ${TOKEN_FILE_ENV}="$here/${TOKEN_FILE}"` : ''}`;
  const head = (what: string) => [
    '#!/bin/sh',
    `# ${what} of run ${options.runId.replace(/[^\w.-]/g, '_')}: sends each call to the run's broker,`,
    "# which checks it against the persona's tool policy, runs it with the daemon's access and records it.",
    'here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)',
    `node=${shellQuote(options.nodePath ?? 'node')}`,
    '[ -x "$node" ] || node=node',
  ];
  const kubectlWrapper = [
    ...head('kubectl guard'),
    ...(options.ownKubeconfig
      ? [`[ "\${KUBECONFIG-}" = ${shellQuote(options.ownKubeconfig)} ] && unset KUBECONFIG`]
      : []),
    `${target} exec "$node" "$here/lib/bin.js" "$@"`,
    '',
  ].join('\n');
  const promqlWrapper = [
    ...head('promql (Prometheus, read-only)'),
    `${target} exec "$node" "$here/lib/promql-bin.js" "$@"`,
    '',
  ].join('\n');
  const kubectl = path.join(dir, 'kubectl');
  const promql = path.join(dir, 'promql');
  // Executable by whoever may read it.
  const execMode = mode | ((mode & 0o444) >> 2);
  await Promise.all([
    writeFile(kubectl, kubectlWrapper, { mode: execMode }),
    writeFile(promql, promqlWrapper, { mode: execMode }),
  ]);
  await Promise.all([chmod(kubectl, execMode), chmod(promql, execMode)]);
  return { dir, kubectl, promql };
}
