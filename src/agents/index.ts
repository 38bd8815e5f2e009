// The registry of agent adapters: one explicit entry per module in this folder.
import type { AgentName } from '../config/schema.js';
import { AGENT_NAMES } from '../config/schema.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import { gemini } from './gemini.js';
import { goose } from './goose.js';
import type { AgentAdapter } from './types.js';

export const AGENTS: Record<AgentName, AgentAdapter> = { claude, codex, gemini, goose };

/** The adapter for `id`; an unknown id fails with the list of valid ones. */
export function getAgent(id: string): AgentAdapter {
  if (Object.hasOwn(AGENTS, id)) return AGENTS[id as AgentName];
  throw new Error(
    `unknown agent "${id}": expected one of ${AGENT_NAMES.join(', ')}; set agent.name or --agent`,
  );
}
