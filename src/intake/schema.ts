import { z } from 'zod';

// The nightcrier incident shape; unknown fields are kept and passed through untouched.

const nonEmpty = z.string().min(1, 'must be a non-empty string');

export const incidentSchema = z.looseObject({
  incidentId: nonEmpty.regex(
    /^[A-Za-z0-9._:-]{1,200}$/,
    'letters, digits, ".", "_", ":" or "-" (at most 200)',
  ),
  faultId: z.string().optional(),
  cluster: nonEmpty,
  namespace: nonEmpty,
  resource: z.looseObject({
    apiVersion: z.string().optional(),
    kind: nonEmpty,
    name: nonEmpty,
    namespace: z.string().optional(),
    uid: z.string().optional(),
  }),
  faultType: nonEmpty,
  severity: nonEmpty,
  context: z.unknown().optional(),
  timestamp: nonEmpty,
});

/** Turns zod issues into "field.path: message" fragments a producer can act on. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 8)
    .map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}
