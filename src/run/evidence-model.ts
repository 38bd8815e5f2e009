import path from 'node:path';
import type { Config } from '../config/schema.js';
import { ModelCallLog } from '../gateway/calls.js';
import type { GatewayHost } from '../gateway/host.js';
import type { ModelCallRecord } from '../gateway/types.js';
import type { AskModel } from '../evidence/model-verify.js';
import { errorMessage } from '../util/errors.js';
import { RUN_FILES } from '../workspace/layout.js';

// The evidence check's second reader, joined to the model gateway (`evidence.verify: model`): a session
// of its own at the gateway for the run (the daemon's key swapped in there, caps and the day's spend
// applied), each call recorded in the run's `model-calls.jsonl` marked `by: evidence`. Only the
// gateway's public entry points are used: a session, its TCP listener, the call log.

export interface EvidenceReader {
  ask: AskModel;
  /** Revokes the session's token and closes the call log. */
  close(): Promise<void>;
}

const MAX_ANSWER_TOKENS = 300;

/** The reader for a run, or undefined when it is off or the gateway cannot carry the provider's calls. */
export async function openEvidenceReader(
  config: Pick<Config, 'evidence'>,
  gateway: GatewayHost | undefined,
  run: { runId: string; bundleDir: string; redact: (text: string) => string },
): Promise<EvidenceReader | undefined> {
  const settings = config.evidence;
  if (settings.verify !== 'model' || !gateway || !gateway.serves(settings.provider)) return undefined;
  const log = await ModelCallLog.open(path.join(run.bundleDir, RUN_FILES.modelCalls), run.redact);
  const session = gateway.gateway.openRun(`${run.runId}/evidence`, settings.provider, {
    onCall: (record: ModelCallRecord) => {
      const marked: ModelCallRecord & { by: 'evidence' } = { ...record, by: 'evidence' };
      return log.append(marked);
    },
  });
  const base = `${await gateway.tcpUrl()}/${settings.provider}`;
  const anthropic = settings.provider === 'anthropic';
  const ask: AskModel = async ({ system, user }) => {
    const url = anthropic ? `${base}/v1/messages` : `${base}/chat/completions`;
    const body = anthropic
      ? {
          model: settings.model,
          max_tokens: MAX_ANSWER_TOKENS,
          system,
          messages: [{ role: 'user', content: user }],
        }
      : {
          model: settings.model,
          max_tokens: MAX_ANSWER_TOKENS,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
        };
    const headers: Record<string, string> = anthropic
      ? { 'content-type': 'application/json', 'x-api-key': session.token, 'anthropic-version': '2023-06-01' }
      : { 'content-type': 'application/json', authorization: `Bearer ${session.token}` };
    const deadline = AbortSignal.timeout(settings.timeout);
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: deadline });
    } catch (err) {
      throw new Error(
        deadline.aborted
          ? `no answer within ${settings.timeout} ms (evidence.timeout)`
          : `the model gateway did not answer: ${errorMessage(err)}`,
      );
    }
    const text = await response.text();
    if (!response.ok) throw new Error(`the ${settings.provider} provider answered HTTP ${response.status}`);
    try {
      const parsed = JSON.parse(text) as {
        content?: { type?: string; text?: string }[];
        choices?: { message?: { content?: string } }[];
      };
      return anthropic
        ? (parsed.content ?? [])
            .filter((c) => c.type === 'text')
            .map((c) => c.text ?? '')
            .join('')
        : (parsed.choices?.[0]?.message?.content ?? '');
    } catch {
      throw new Error(`the ${settings.provider} provider's answer is not JSON`);
    }
  };
  return {
    ask,
    close: async () => {
      gateway.gateway.closeRun(session);
      await log.close();
    },
  };
}
