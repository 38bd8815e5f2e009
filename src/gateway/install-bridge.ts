import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ParseCache } from '../util/parse-cache.js';

// Writes the gateway bridge (one ES module, node builtins only) into a folder of the run bundle that is
// mounted into the agent's container. Compiled, the JavaScript is copied; from sources (tests, tsx) it is
// transpiled on the spot, as the kubectl guard's client is.

/** Set for the bridge: the gateway socket as the agent sees it, and the loopback port to serve. */
export const BRIDGE_SOCKET_ENV = 'TRIAGE_GATEWAY_SOCKET';
export const BRIDGE_PORT_ENV = 'TRIAGE_GATEWAY_PORT';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const COMPILED = import.meta.url.endsWith('.js');
const transpiled = new ParseCache<string>();

async function bridgeSource(): Promise<string> {
  const dir = path.join(HERE, 'bridge');
  if (COMPILED) return readFile(path.join(dir, 'bridge.js'), 'utf8');
  const ts = await import('typescript');
  const file = path.join(dir, 'bridge.ts');
  const source = await readFile(file, 'utf8');
  return transpiled.get(
    file,
    source,
    () =>
      ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText,
  );
}

/** Installs the bridge into `dir` (created); returns the script's path there. */
export async function installBridge(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const file = path.join(dir, 'bridge.mjs');
  await writeFile(file, await bridgeSource(), { mode: 0o644 });
  return file;
}
