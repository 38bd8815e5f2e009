import type { NotifySinkType } from '../../config/schema.js';
import type { SinkAdapter, SinkPayload } from '../types.js';
import { pagerduty } from './pagerduty.js';
import { slack } from './slack.js';
import { webhook } from './webhook.js';

// Every sink type, in one explicit map (a test checks it matches this folder and the config's types).

export const SINKS: Record<NotifySinkType, SinkAdapter<SinkPayload>> = {
  slack: slack as unknown as SinkAdapter<SinkPayload>,
  webhook: webhook as unknown as SinkAdapter<SinkPayload>,
  pagerduty: pagerduty as unknown as SinkAdapter<SinkPayload>,
};
