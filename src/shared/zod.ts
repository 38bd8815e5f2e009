// Every module imports zod from here, never from 'zod' (eslint enforces it), so that the build's
// bundle of this file (scripts/bundle-vendor.mjs) is the only zod the compiled CLI loads.
export * as z from './zod-api.js';
