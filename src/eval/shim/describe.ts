import type { KubectlCommand } from '../../kubectl/parse.js';
import type { ResourceType } from '../../kubectl/resources.js';
import { listObjects, type FrozenCluster, type FrozenObject } from './cluster.js';
import { generatedDescribe } from './describers.js';
import { effectiveNamespace, noResources, notFound, select } from './get.js';
import { fail, withNewline, type ShimAnswer } from './output.js';

// `kubectl describe`: recorded describe text when the case has it, else kubectl's describe output
// generated from the recorded objects (describers.ts; Secrets by size only). An object of a type
// with neither is reported as not recorded rather than faked.

/** The describe text of one object, or undefined when it was not recorded and cannot be generated. */
function describeOne(cluster: FrozenCluster, type: ResourceType, o: FrozenObject): string | undefined {
  const recorded = cluster.describes.find(
    (d) =>
      d.type === type.name && d.name === o.name && (d.namespace ?? undefined) === (o.namespace ?? undefined),
  );
  if (recorded) return withNewline(recorded.text);
  const generated = generatedDescribe(cluster, type.name, o);
  return generated;
}

/** `kubectl describe`. */
export function describe(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  if (cmd.targets.length === 0) {
    return fail(
      'error: You must specify the type of resource to describe. Use "kubectl api-resources" for a complete list of supported resources.',
      'usage-error',
    );
  }
  const namespace = effectiveNamespace(cmd, cluster);
  // kubectl describe falls back to a name prefix when no object has the exact name.
  const prefixCmd: KubectlCommand = {
    ...cmd,
    flags: { ...cmd.flags, 'ignore-not-found': 'true' },
  };
  const selected = select(prefixCmd, cluster);
  if ('answeredFrom' in selected) return selected;
  const texts: string[] = [];
  const errors: string[] = [];
  const missing: string[] = [];
  for (const [i, selection] of selected.selections.entries()) {
    const target = cmd.targets[Math.min(i, cmd.targets.length - 1)];
    let objects = selection.objects;
    if (target && target.names.length > 0) {
      objects = [];
      for (const name of target.names) {
        const exact = selection.objects.filter((o) => o.name === name);
        const ns = selection.type.namespaced ? namespace : undefined;
        const matches =
          exact.length > 0
            ? exact
            : listObjects(cluster, selection.type.name, ns).filter((o) => o.name.startsWith(name));
        if (matches.length === 0) errors.push(notFound(selection.type, name));
        objects.push(...matches);
      }
    }
    for (const o of objects) {
      const text = describeOne(cluster, selection.type, o);
      if (text === undefined) missing.push(`${selection.type.singular} "${o.name}"`);
      else texts.push(text);
    }
  }
  const stderr = [...errors];
  if (missing.length > 0) {
    stderr.push(
      `error: describe output for ${missing.join(', ')} was not recorded in this frozen cluster (case ${cluster.caseName}); kubectl get <type> <name> -o yaml shows the recorded object`,
    );
  }
  const anyNamed = cmd.targets.some((t) => t.names.length > 0);
  if (texts.length === 0 && errors.length === 0 && missing.length === 0 && !anyNamed) {
    stderr.push(
      noResources(selected.selections.length === 1 ? selected.selections[0]?.type : undefined, namespace),
    );
  }
  return {
    stdout: texts.join('\n\n'),
    stderr: stderr.map((l) => `${l}\n`).join(''),
    exitCode: errors.length > 0 || missing.length > 0 ? 1 : 0,
    answeredFrom: missing.length > 0 && texts.length === 0 ? 'not-recorded' : 'describe',
  };
}
