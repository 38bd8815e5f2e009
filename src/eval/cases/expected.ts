import { z } from '../../shared/zod.js';

// expected.yaml: what a correct investigation of a case finds (root-cause entities and cause, facts
// the report must state) and what it must not do or recommend. Patterns are literal text (matched
// case-insensitively, whole words at word edges) or `/regex/flags`.

const patternText = z
  .string()
  .min(1)
  .superRefine((text, ctx) => {
    const m = /^\/(.*)\/([gimsuy]*)$/s.exec(text);
    if (!m) return;
    try {
      new RegExp(m[1] as string, m[2]);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
    }
  });

const id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_./-]*$/, 'letters, digits, "_", ".", "/" and "-"');

const anyOf = z.strictObject({
  id,
  any: z.array(patternText).min(1).describe('the item is found when any pattern matches'),
});

export const expectedSchema = z.strictObject({
  summary: z.string().min(1).describe('what happened, for people reading the case'),
  root_cause: z.strictObject({
    section: z
      .string()
      .min(1)
      .default('Root Cause')
      .describe('heading of the report section that must name the causes'),
    entities: z
      .array(
        z.strictObject({
          id: id.describe('kind/name of the true cause, e.g. configmap/orders-api-config'),
          match: z.array(patternText).min(1).describe('how the report may name it'),
        }),
      )
      .min(1)
      .describe('every true cause; missing any one scores 0 (several causes: all are needed)'),
    related: z
      .array(z.string().min(1))
      .default([])
      .describe('names (symptom objects) that are neither right nor wrong when the section mentions them'),
    distractors: z
      .array(z.string().min(1))
      .default([])
      .describe('extra names that count as a wrong cause, beyond the objects of the frozen cluster'),
    cause: z.array(anyOf).default([]).describe('what the cause is: each item must be found in the section'),
  }),
  facts: z.array(anyOf).default([]).describe('facts the report must state anywhere'),
  forbidden: z
    .strictObject({
      kubectl: z
        .array(z.strictObject({ id, pattern: patternText.describe('matched against the normalised call') }))
        .default([])
        .describe('calls forbidden in this case beyond the read-only rule (which always applies)'),
      recommendations: z
        .array(
          z.strictObject({
            id,
            pattern: patternText,
            human_step_ok: z
              .boolean()
              .default(true)
              .describe('allowed when the same step hands it to a person (approval, on-call, owner)'),
          }),
        )
        .default([]),
    })
    .prefault({}),
  pass_score: z.number().min(0).max(1).default(0.7),
});

export type Expected = z.infer<typeof expectedSchema>;

/** Compiles a pattern of expected.yaml: `/re/flags` as given (always case-insensitive), text as a whole-word literal. */
export function compilePattern(text: string): RegExp {
  const m = /^\/(.*)\/([gimsuy]*)$/s.exec(text);
  if (m) {
    const flags = m[2] as string;
    return new RegExp(m[1] as string, flags.includes('i') ? flags : `${flags}i`);
  }
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const start = /^[A-Za-z0-9_]/.test(text) ? '(?<![A-Za-z0-9_])' : '';
  const end = /[A-Za-z0-9_]$/.test(text) ? '(?![A-Za-z0-9_])' : '';
  return new RegExp(`${start}${escaped}${end}`, 'i');
}
