// Every module imports yaml from here, never from 'yaml' (eslint enforces it): the build replaces the
// compiled file with one bundle (scripts/bundle-vendor.mjs) instead of yaml's ~70 CommonJS modules.
export { LineCounter, isMap, isSeq, parseAllDocuments, parseDocument, stringify } from 'yaml';
export type { Document } from 'yaml';
