import type { Metafile } from 'esbuild';

/** Bundles `src/shared/zod.ts` into `outfile`; resolves to esbuild's metafile (the inputs it kept). */
export function bundleZod(outfile: string): Promise<Metafile>;
