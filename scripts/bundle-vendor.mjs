// Replaces compiled `dist/shared/zod.js` and `dist/shared/yaml.js` with one bundled file each. zod's
// entry points evaluate every locale (about 95 modules) and yaml is about 70 CommonJS modules: every
// command that reads the configuration (`validate-config`, the daemon's start-up) loaded them all. The
// zod bundle keeps the members `src/shared/zod-api.ts` names and the English messages.
// Run by `npm run build` after tsc.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The shared modules that are bundled, by name (`src/shared/<name>.ts`). */
export const VENDORED = ['zod', 'yaml'];

/** Bundles `src/shared/<name>.ts` into `outfile`; resolves to esbuild's metafile (the inputs it kept). */
export async function bundleVendor(name, outfile) {
  const result = await build({
    entryPoints: [path.join(REPO, 'src/shared', `${name}.ts`)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    metafile: true,
    logLevel: 'warning',
    allowOverwrite: true,
    legalComments: 'none',
    // yaml is CommonJS and requires node builtins: an ES module has no `require` of its own.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
  });
  return result.metafile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const name of VENDORED) await bundleVendor(name, path.join(REPO, 'dist/shared', `${name}.js`));
}
