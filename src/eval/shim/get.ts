import type { KubectlCommand } from '../../kubectl/parse.js';
import {
  ALL_CATEGORY,
  RESOURCE_TYPES,
  qualifiedSingular,
  type ResourceType,
} from '../../kubectl/resources.js';
import { findObject, labelsOf, listObjects, type FrozenCluster, type FrozenObject } from './cluster.js';
import { evaluate, executeTemplate, JsonPathError, valueText } from './jsonpath.js';
import { fail, kubectlJson, listObject, listYaml, ok, type ShimAnswer } from './output.js';
import { EVENTS_WIDE_HEADERS, eventsWideRow, printerFor } from './printers.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from './selectors.js';
import { renderTable } from './table.js';

// `kubectl get` over the frozen cluster: type and name resolution, label and field selectors,
// --sort-by, and every printer (table, wide, name, json, yaml, jsonpath, custom-columns).

const ALLOWED_FORMATS =
  'custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml';
const UNSUPPORTED_FORMATS =
  /^(go-template|go-template-file|template|templatefile|jsonpath-file|custom-columns-file|kyaml)(=|$)/;

export interface Selection {
  type: ResourceType;
  objects: FrozenObject[];
}

/** The namespace a command reads: `undefined` for all namespaces. */
export const effectiveNamespace = (cmd: KubectlCommand, cluster: FrozenCluster): string | undefined =>
  cmd.allNamespaces ? undefined : (cmd.namespace ?? cluster.namespace);

export const notFound = (type: ResourceType, name: string): string =>
  `Error from server (NotFound): ${type.group === '' ? type.name : `${type.name}.${type.group}`} "${name}" not found`;

export const noResources = (type: ResourceType | undefined, namespace: string | undefined): string =>
  type?.namespaced === false || namespace === undefined
    ? 'No resources found'
    : `No resources found in ${namespace} namespace.`;

/** Resolves the targets of get/describe: types (with `all` expanded), objects, and NotFound errors. */
export function select(
  cmd: KubectlCommand,
  cluster: FrozenCluster,
): { selections: Selection[]; errors: string[] } | ShimAnswer {
  const unknown = cmd.targets.find((t) => !t.type && t.text.toLowerCase() !== 'all');
  if (unknown) return fail(`error: the server doesn't have a resource type "${unknown.text}"`, 'objects');
  const namespace = effectiveNamespace(cmd, cluster);
  const named = cmd.targets.some((t) => t.names.length > 0);
  if (named && cmd.allNamespaces)
    return fail('error: a resource cannot be retrieved by name across all namespaces', 'usage-error');
  if (named && cmd.selector !== undefined)
    return fail('error: name cannot be provided when a selector is specified', 'usage-error');
  const labels = cmd.selector === undefined ? [] : parseLabelSelector(cmd.selector);
  if (typeof labels === 'string') return fail(`error: ${labels}`, 'usage-error');
  const selections: Selection[] = [];
  const errors: string[] = [];
  for (const target of cmd.targets) {
    const types = target.type
      ? [target.type]
      : ALL_CATEGORY.map((name) => RESOURCE_TYPES.find((r) => r.name === name) as ResourceType);
    for (const type of types) {
      const fieldText = cmd.flags['field-selector'];
      const fields = fieldText === undefined ? [] : parseFieldSelector(fieldText, type.name);
      if (typeof fields === 'string') {
        return fail(
          `Error from server (BadRequest): Unable to find "${type.group === '' ? '' : type.group}/${type.version}, Resource=${type.name}" that match label selector "${cmd.selector ?? ''}", field selector "${fieldText ?? ''}": ${fields}`,
          'objects',
        );
      }
      const ns = type.namespaced ? namespace : undefined;
      let objects: FrozenObject[];
      if (target.names.length > 0) {
        objects = [];
        for (const name of target.names) {
          const found = findObject(cluster, type.name, type.namespaced ? namespace : undefined, name);
          if (found) objects.push(found);
          else if (cmd.flags['ignore-not-found'] !== 'true') errors.push(notFound(type, name));
        }
      } else {
        objects = listObjects(cluster, type.name, ns).filter(
          (o) => matchesLabels(labels, labelsOf(o)) && matchesFields(fields, o.object),
        );
      }
      selections.push({ type, objects: sortBy(objects, cmd.flags['sort-by']) });
    }
  }
  return { selections, errors };
}

function sortBy(objects: FrozenObject[], path: string | undefined): FrozenObject[] {
  if (!path) return objects;
  const key = (o: FrozenObject) => evaluate(path, o.object)[0];
  return [...objects].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return valueText(x).localeCompare(valueText(y));
  });
}

function tableOf(
  cmd: KubectlCommand,
  cluster: FrozenCluster,
  selection: Selection,
  prefixed: boolean,
): string {
  const now = Date.parse(cluster.now);
  const wide = cmd.output === 'wide';
  const printer = printerFor(selection.type.name);
  const eventsWide = wide && selection.type.name === 'events';
  const headers = eventsWide ? [...EVENTS_WIDE_HEADERS] : [...printer.headers, ...(wide ? printer.wide : [])];
  const labelColumns = (cmd.flags['label-columns'] ?? '').split(',').filter(Boolean);
  const showLabels = cmd.flags['show-labels'] === 'true';
  const namespaceColumn = cmd.allNamespaces && selection.type.namespaced;
  const rows = selection.objects.map((o) => {
    const cells = eventsWide
      ? eventsWideRow(o, now)
      : [...printer.row(o.object, now), ...(wide ? printer.wideRow(o.object, now) : [])];
    if (prefixed && !eventsWide && headers[0] === 'NAME')
      cells[0] = `${qualifiedSingular(selection.type)}/${cells[0] ?? ''}`;
    const labels = labelsOf(o);
    for (const column of labelColumns) cells.push(labels[column] ?? '');
    if (showLabels) {
      const text = Object.entries(labels)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      cells.push(text === '' ? '<none>' : text);
    }
    return namespaceColumn ? [o.namespace ?? '', ...cells] : cells;
  });
  const allHeaders = [
    ...(namespaceColumn ? ['NAMESPACE'] : []),
    ...headers,
    ...labelColumns.map((c) => c.split('/').pop()?.toUpperCase() ?? c.toUpperCase()),
    ...(showLabels ? ['LABELS'] : []),
  ];
  return renderTable(allHeaders, rows, { noHeaders: cmd.flags['no-headers'] === 'true' });
}

function customColumns(spec: string, objects: FrozenObject[], noHeaders: boolean): string {
  const columns = spec.split(',').map((c) => {
    const colon = c.indexOf(':');
    if (colon === -1)
      throw new JsonPathError(`unexpected custom-columns spec: ${c}, expected <header>:<json-path-expr>`);
    return { header: c.slice(0, colon), path: c.slice(colon + 1) };
  });
  const rows = objects.map((o) =>
    columns.map((c) => {
      const values = evaluate(c.path, o.object);
      return values.length === 0 ? '<none>' : values.map(valueText).join(',');
    }),
  );
  return renderTable(
    columns.map((c) => c.header),
    rows,
    { noHeaders },
  );
}

/** Prints the selected objects in the requested format. */
export function printObjects(
  cmd: KubectlCommand,
  cluster: FrozenCluster,
  selections: Selection[],
  singleItem: boolean,
): ShimAnswer {
  const output = cmd.output;
  const objects = selections.flatMap((s) => s.objects);
  if (output === undefined || output === 'wide') {
    const shown = selections.filter((s) => s.objects.length > 0);
    const prefixed =
      cmd.flags['show-kind'] === 'true' || new Set(selections.map((s) => s.type.name)).size > 1;
    return ok(shown.map((s) => tableOf(cmd, cluster, s, prefixed)).join('\n'));
  }
  if (output === 'name') {
    return ok(
      selections.flatMap((s) => s.objects.map((o) => `${qualifiedSingular(s.type)}/${o.name}\n`)).join(''),
    );
  }
  if (output === 'json')
    return ok(kubectlJson(singleItem && objects[0] ? objects[0].object : listObject(objects)));
  if (output === 'yaml') return ok(singleItem && objects[0] ? objects[0].yaml : listYaml(objects));
  const eq = output.indexOf('=');
  const format = eq === -1 ? output : output.slice(0, eq);
  const arg = eq === -1 ? '' : output.slice(eq + 1);
  if (UNSUPPORTED_FORMATS.test(output)) {
    return fail(
      `error: -o ${format} is not available in this frozen cluster (case ${cluster.caseName}); use -o json, -o yaml, -o jsonpath=… or -o custom-columns=…`,
      'unsupported',
    );
  }
  try {
    const data = singleItem && objects[0] ? objects[0].object : listObject(objects);
    if (format === 'jsonpath') {
      if (arg === '') return fail('error: template format specified but no template given', 'usage-error');
      return ok(executeTemplate(arg, data));
    }
    if (format === 'jsonpath-as-json') return ok(kubectlJson(evaluate(arg, data)));
    if (format === 'custom-columns')
      return ok(customColumns(arg, objects, cmd.flags['no-headers'] === 'true'));
  } catch (err) {
    if (err instanceof JsonPathError)
      return fail(`error: error parsing jsonpath ${arg}, ${err.message}`, 'usage-error');
    throw err;
  }
  return fail(
    `error: unable to match a printer suitable for the output format "${output}", allowed formats are: ${ALLOWED_FORMATS}`,
    'usage-error',
  );
}

/** `kubectl get`. */
export function get(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  if (cmd.targets.length === 0) {
    return fail(
      [
        'You must specify the type of resource to get. Use "kubectl api-resources" for a complete list of supported resources.',
        '',
        'error: Required resource not specified.',
        'Use "kubectl explain <resource>" for a detailed description of that resource (e.g. kubectl explain pods).',
        "See 'kubectl get -h' for help and examples",
      ].join('\n'),
      'usage-error',
    );
  }
  const selected = select(cmd, cluster);
  if ('answeredFrom' in selected) return selected;
  const { selections, errors } = selected;
  const singleItem =
    cmd.targets.length === 1 &&
    (cmd.targets[0]?.names.length ?? 0) === 1 &&
    cmd.targets[0]?.type !== undefined;
  const total = selections.reduce((n, s) => n + s.objects.length, 0);
  const printed = printObjects(cmd, cluster, selections, singleItem);
  if (printed.exitCode !== 0) return printed;
  const stderr: string[] = [...errors];
  const named = cmd.targets.some((t) => t.names.length > 0);
  const structured = cmd.output !== undefined && cmd.output !== 'wide' && cmd.output !== 'name';
  if (total === 0 && !named && !structured) {
    const namespace = effectiveNamespace(cmd, cluster);
    stderr.push(noResources(selections.length === 1 ? selections[0]?.type : undefined, namespace));
  }
  return {
    ...printed,
    stderr: stderr.map((l) => `${l}\n`).join(''),
    exitCode: errors.length > 0 ? 1 : 0,
  };
}
