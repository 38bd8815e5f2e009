import { formatCount, formatDuration, formatShare } from '../../status/format.js';
import type { ViewMeasures } from '../../status/types.js';
import { html, type SafeHtml } from './html.js';

// The incident page's "Model calls" section: what the latest run cost, as the model gateway counted
// its calls (result.json `measures`).

const tokens = (n: number | null) => (n === null ? '-' : `${formatCount(n)} (${n})`);

/** The run's model calls: how many and which model, its first call, its tokens and the cache's share. */
export function modelCallsSection(m: ViewMeasures | null): SafeHtml {
  if (!m) {
    return html`<section>
      <h2>Model calls</h2>
      <p class="none" id="model-calls-none">No model call went through the gateway in the latest run.</p>
    </section>`;
  }
  const row = (name: string, value: string, id: string) =>
    html`<dt>${name}</dt>
      <dd id="${id}">${value}</dd>`;
  return html`<section>
    <h2>Model calls</h2>
    <dl class="model-calls">
      ${row('Calls', String(m.modelCalls), 'calls')} ${row('Model', m.model ?? '-', 'model')}
      ${row('First call, input tokens', tokens(m.firstCallInputTokens), 'first-call-input')}
      ${row('Time to the first call', formatDuration(m.firstModelCallMs), 'first-call-ms')}
      ${row('Time to its first token', formatDuration(m.firstTokenMs), 'first-token-ms')}
      ${row('Time to the first tool call', formatDuration(m.firstToolCallMs), 'first-tool-ms')}
      ${row('Input tokens', tokens(m.inputTokens), 'input-tokens')}
      ${row('Output tokens', tokens(m.outputTokens), 'output-tokens')}
      ${row('Read from the prompt cache', `${tokens(m.cacheReadTokens)}, ${formatShare(m.cacheReadShare)} of the input`, 'cache-read')}
      ${row('Written to the prompt cache', tokens(m.cacheWriteTokens), 'cache-write')}
    </dl>
  </section>`;
}
