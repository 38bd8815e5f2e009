// Every module imports yaml from here, never from 'yaml' (eslint enforces it): the build replaces the
// compiled file with one bundle (scripts/bundle-vendor.mjs) instead of yaml's ~70 CommonJS modules.
export {
  Document,
  LineCounter,
  isMap,
  isScalar,
  isSeq,
  parse,
  parseAllDocuments,
  parseDocument,
  stringify,
  visit,
} from 'yaml';
