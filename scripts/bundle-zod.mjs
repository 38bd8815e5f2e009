// Replaces the compiled `dist/shared/zod.js` with one tree-shaken file: zod's entry points evaluate
// every locale (about 95 modules), which made `validate-config` and the daemon's start-up load them
// all; the bundle keeps the members `src/shared/zod-api.ts` names and the English messages.
// Run by `npm run build` after tsc.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles `src/shared/zod.ts` into `outfile`; resolves to esbuild's metafile (the inputs it kept). */
export async function bundleZod(outfile) {
  const result = await build({
    entryPoints: [path.join(REPO, 'src/shared/zod.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    metafile: true,
    logLevel: 'warning',
    allowOverwrite: true,
    legalComments: 'none',
  });
  return result.metafile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleZod(path.join(REPO, 'dist/shared/zod.js'));
}
