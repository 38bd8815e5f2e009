import { z } from '../shared/zod.js';

// The nightcrier incident shape; unknown fields are kept and passed through untouched.

const nonEmpty = z.string().min(1, 'must be a non-empty string');

// Kubernetes names (DNS-1123). The namespace is also handed to the triage script as an argument
// (`--namespace {namespace}`): a value like `--output-dir` or `a b` must never get that far.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** RBAC objects are named by path segments (`system:controller:…`), not DNS names. */
const PATH_SEGMENT = /^(?!\.{1,2}$)[^/%]+$/;
const LABEL_HINT =
  'must be a Kubernetes namespace name (DNS-1123 label: at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit)';

/** The value as an error message shows it: quoted, control characters escaped, at most 80 characters. */
const shown = (value: string): string => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);

export const namespaceName = z.string().superRefine((value, ctx) => {
  if (value.length > 63 || !DNS_LABEL.test(value))
    ctx.addIssue({ code: 'custom', message: `${shown(value)} ${LABEL_HINT}` });
});

/** Whether `name` is a valid name for an object of `apiVersion` (DNS-1123 subdomain; RBAC: path segment). */
export function kubernetesNameProblem(name: string, apiVersion: string | undefined): string | undefined {
  if (apiVersion?.startsWith('rbac.authorization.k8s.io/'))
    return PATH_SEGMENT.test(name)
      ? undefined
      : 'must be a valid RBAC object name (no "/" or "%", not "." or "..")';
  if (name.length <= 253 && DNS_SUBDOMAIN.test(name)) return undefined;
  return 'must be a Kubernetes object name (DNS-1123 subdomain: at most 253 lowercase letters, digits, "-" and ".")';
}

export const incidentSchema = z.looseObject({
  incidentId: nonEmpty.regex(
    /^[A-Za-z0-9._:-]{1,200}$/,
    'letters, digits, ".", "_", ":" or "-" (at most 200)',
  ),
  faultId: z.string().optional(),
  cluster: nonEmpty,
  namespace: namespaceName,
  resource: z
    .looseObject({
      apiVersion: z.string().optional(),
      kind: nonEmpty,
      name: nonEmpty,
      // '' is how some producers say "cluster-scoped".
      namespace: z.union([z.literal(''), namespaceName]).optional(),
      uid: z.string().optional(),
    })
    .superRefine((resource, ctx) => {
      // Only Kubernetes objects (an apiVersion) have Kubernetes names; an alert's pseudo-resource
      // (a PagerDuty service, a cluster) keeps its own.
      if (resource.apiVersion === undefined) return;
      const problem = kubernetesNameProblem(resource.name, resource.apiVersion);
      if (problem)
        ctx.addIssue({ code: 'custom', path: ['name'], message: `${shown(resource.name)} ${problem}` });
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
