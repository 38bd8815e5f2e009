// The part of zod this project uses, by name. `zod.ts` re-exports it as the `z` namespace; the build
// bundles that namespace on its own, so the compiled CLI loads one file with the English messages
// instead of zod's ~95 modules (every locale is evaluated by zod's own entry points).
export {
  NEVER,
  ZodError,
  ZodType,
  array,
  boolean,
  email,
  enum,
  iso,
  literal,
  looseObject,
  number,
  object,
  record,
  strictObject,
  string,
  union,
  unknown,
  url,
} from 'zod';
export type { RefinementCtx, core, infer, input, output } from 'zod';
