import type { ViewSubject } from '../../status/types.js';
import { workloadLabel } from '../../workspace/workloads.js';
import { html, type SafeHtml } from './html.js';

// The workloads of a storm's incident on the page: the list counts them (each named in the title),
// the incident's page names every one. status.js makes the list's count the same way.

/** " · 6 workloads" when more than one workload alerted; nothing for one. */
export function workloadCount(s: ViewSubject): SafeHtml {
  const count = s.workloads.length + s.moreWorkloads;
  if (count <= 1) return html``;
  return html` ·
    <span class="workloads" title="${s.workloads.map((w) => `${w.kind}/${w.name}`).join(', ')}"
      >${String(count)} workloads</span
    >`;
}

/** Every workload with its alerts, then how many more there are past the view's bound. */
export function workloadList(s: ViewSubject): SafeHtml {
  const items = s.workloads.map((w) => {
    const label = workloadLabel({
      kind: w.kind,
      name: w.name,
      ...(w.namespace ? { namespace: w.namespace } : {}),
    });
    const alerts = w.alerts === null ? '' : ` (${w.alerts} alert${w.alerts === 1 ? '' : 's'})`;
    return html`<li>${label}${alerts}</li>`;
  });
  const more = s.moreWorkloads > 0 ? html`<li>and ${String(s.moreWorkloads)} more</li>` : html``;
  return html`<ul class="workloads">
    ${items}${more}
  </ul>`;
}
