import type { Metafile } from 'esbuild';

/** The shared modules that are bundled, by name (`src/shared/<name>.ts`). */
export const VENDORED: readonly string[];

/** Bundles `src/shared/<name>.ts` into `outfile`; resolves to esbuild's metafile (the inputs it kept). */
export function bundleVendor(name: string, outfile: string): Promise<Metafile>;
