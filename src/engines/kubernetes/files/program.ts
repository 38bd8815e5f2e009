import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROGRAM_SUBPATH, ENV } from './protocol.js';

// The pod's programs travel in the Job itself: the init container runs `node -e <bootstrap>`, and the
// bootstrap (the modules' sources as data, no secret) writes them into the pod's emptyDir and runs
// fetch.js; the agent container runs sync.js from there. No image of ours has to carry them, so the
// daemon and its agent pods can never disagree on the protocol. Compiled, the JavaScript is read; from
// sources (tests, tsx) each module is transpiled on the spot, as the kubectl guard's client is.

const HERE = path.dirname(fileURLToPath(import.meta.url));
const COMPILED = import.meta.url.endsWith('.js');
/** The pod's modules: fetch.js (init container) and sync.js (agent container) import the others. */
const MODULES = ['protocol', 'http', 'fetch', 'sync'] as const;

async function moduleSource(name: string): Promise<string> {
  if (COMPILED) return readFile(path.join(HERE, `${name}.js`), 'utf8');
  const ts = await import('typescript');
  const source = await readFile(path.join(HERE, `${name}.ts`), 'utf8');
  return ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

let bootstrap: Promise<string> | undefined;

/**
 * The init container's script (`node --input-type=module -e <it>`): writes the modules under
 * `$TRIAGE_RUN_FILES_ROOT/<PROGRAM_SUBPATH>` and imports fetch.js. Read once per process.
 */
export function podBootstrap(): Promise<string> {
  bootstrap ??= (async () => {
    const files: Record<string, string> = { 'package.json': '{ "type": "module" }\n' };
    for (const name of MODULES) files[`${name}.js`] = await moduleSource(name);
    return [
      "import { mkdirSync, writeFileSync } from 'node:fs';",
      `const dir = process.env.${ENV.root} + ${JSON.stringify(`/${PROGRAM_SUBPATH}`)};`,
      'mkdirSync(dir, { recursive: true, mode: 0o755 });',
      `for (const [name, text] of Object.entries(${JSON.stringify(files)})) writeFileSync(dir + '/' + name, text, { mode: 0o644 });`,
      "await import(dir + '/fetch.js');",
    ].join('\n');
  })();
  // A failed read is tried again by the next run.
  bootstrap.catch(() => (bootstrap = undefined));
  return bootstrap;
}
