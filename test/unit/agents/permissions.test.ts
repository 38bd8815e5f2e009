import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import {
  CODEX_RULES_FILE,
  GEMINI_POLICY_FILE,
  claudePermissionArgs,
  codexRulesFile,
  geminiPolicyFile,
} from '../../../src/agents/shared/permissions.js';
import { claude } from '../../../src/agents/claude.js';
import { codex } from '../../../src/agents/codex.js';
import { gemini } from '../../../src/agents/gemini.js';
import { goose } from '../../../src/agents/goose.js';
import type { InvocationInput } from '../../../src/agents/types.js';
import type { ToolPermissions } from '../../../src/shared/types.js';

const permissions: ToolPermissions = {
  persona: 'sre',
  allowedTools: ['shell', 'read', 'search'],
  deniedTools: ['web'],
  deniedCommands: [
    ['kubectl', 'delete'],
    ['kubectl', 'rollout', 'undo'],
    ['helm', 'install'],
  ],
  reason: 'The sre persona does not allow "this".',
};

const input = (extra: Partial<InvocationInput> = {}): InvocationInput => ({
  prompt: { system: 'sys', user: 'user' },
  maxTurns: 5,
  extraArgs: [],
  paths: {
    home: '/home/agent',
    workspaceDir: '/workspace',
    reportPath: '/workspace/output/r.md',
    filesDir: '/files',
  },
  providers: {},
  secrets: {},
  ...extra,
});

describe('claude permission flags', () => {
  it('offers and pre-approves the tools an investigation needs when no policy is given', () => {
    expect(claudePermissionArgs(undefined)).toEqual([
      '--tools=Bash,Read,Write,Glob,Grep,Skill',
      '--allowedTools=Bash,Read,Write,Glob,Grep,Skill',
    ]);
  });

  it('offers the investigation tools the policy allows and denies tools and command prefixes with Bash(… *) rules', () => {
    const refusing: ToolPermissions = { ...permissions, deniedTools: ['web', 'write', 'skill'] };
    expect(claudePermissionArgs(refusing, ['web', 'todo'])).toEqual([
      '--tools=Bash,Read,Glob,Grep,TodoWrite',
      '--allowedTools=Bash,Read,Glob,Grep,TodoWrite',
      '--disallowedTools=WebFetch,WebSearch,Write,Skill,Bash(kubectl delete *),Bash(kubectl rollout undo *),Bash(helm install *)',
    ]);
  });

  it('are part of the claude invocation, after --permission-mode dontAsk', () => {
    const args = claude.buildInvocation(input({ permissions })).args;
    const mode = args.indexOf('dontAsk');
    expect(args.slice(mode + 1, mode + 4)).toEqual(claudePermissionArgs(permissions));
  });
});

describe('gemini policy file', () => {
  it('is a user-tier TOML policy that denies the prefixes and tools above yolo mode', () => {
    const file = geminiPolicyFile(permissions);
    expect(file).toMatchObject({ path: GEMINI_POLICY_FILE, inHome: true });
    expect(parse(file.content)).toEqual({
      rule: [
        {
          toolName: 'run_shell_command',
          commandPrefix: ['kubectl delete', 'kubectl rollout undo', 'helm install'],
          decision: 'deny',
          priority: 900,
          denyMessage: permissions.reason,
        },
        { toolName: ['web_fetch', 'google_web_search', 'browser_agent'], decision: 'deny', priority: 900 },
      ],
    });
  });

  it('is handed to gemini only with a policy', () => {
    expect(gemini.buildInvocation(input()).files.map((f) => f.path)).not.toContain(GEMINI_POLICY_FILE);
    expect(gemini.buildInvocation(input({ permissions })).files.map((f) => f.path)).toContain(
      GEMINI_POLICY_FILE,
    );
  });
});

describe('codex rules file', () => {
  it('forbids each prefix with the reason as justification, quoted safely', () => {
    const file = codexRulesFile(permissions);
    expect(file).toMatchObject({ path: CODEX_RULES_FILE, inHome: true });
    expect(file.content.split('\n').filter((l) => l.startsWith('prefix_rule'))).toEqual([
      'prefix_rule(pattern = ["kubectl","delete"], decision = "forbidden", justification = "The sre persona does not allow \\"this\\".")',
      'prefix_rule(pattern = ["kubectl","rollout","undo"], decision = "forbidden", justification = "The sre persona does not allow \\"this\\".")',
      'prefix_rule(pattern = ["helm","install"], decision = "forbidden", justification = "The sre persona does not allow \\"this\\".")',
    ]);
    expect(codex.buildInvocation(input({ permissions })).files.map((f) => f.path)).toContain(
      CODEX_RULES_FILE,
    );
  });
});

describe('goose', () => {
  it('has no per-command permission setting: its invocation is the same with or without a policy', () => {
    expect(goose.buildInvocation(input({ permissions }))).toEqual(goose.buildInvocation(input()));
  });
});
