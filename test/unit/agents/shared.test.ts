import { describe, expect, it } from 'vitest';
import { findJsonObject, parseJsonLines } from '../../../src/agents/shared/json.js';
import { looksLikeAuthFailure } from '../../../src/agents/shared/outcome.js';

describe('findJsonObject', () => {
  it('finds the JSON object that follows free-form lines', () => {
    const text = 'Warning: something\nYOLO mode is enabled.\n{\n  "error": { "code": 401 }\n}\n';
    expect(findJsonObject(text)).toEqual({ error: { code: 401 } });
  });

  it('returns undefined when there is none', () => {
    expect(findJsonObject('no json here\n{ broken')).toBeUndefined();
  });
});

describe('parseJsonLines', () => {
  it('keeps object lines and counts the rest', () => {
    expect(parseJsonLines('{"a":1}\nnoise\n\n{"b":2}\n[1]')).toEqual({
      records: [{ a: 1 }, { b: 2 }],
      invalidLines: 2,
    });
  });
});

describe('looksLikeAuthFailure', () => {
  it.each([
    'unexpected status 401 Unauthorized: Incorrect API key provided',
    '{"error":{"code":401,"message":"API key not valid"}}',
    'invalid x-api-key',
    'status: 403 PERMISSION_DENIED',
  ])('recognises %s', (text) => {
    expect(looksLikeAuthFailure(text)).toBe(true);
  });

  it('does not flag ordinary failures', () => {
    expect(looksLikeAuthFailure('stream disconnected before completion; 500 Internal Server Error')).toBe(
      false,
    );
  });
});
