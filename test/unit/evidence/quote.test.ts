import { describe, expect, it } from 'vitest';
import { normalizeLine } from '../../../src/evidence/normalize.js';
import { countHeld, heldAt, outputLines, prepareQuote, tooWeak } from '../../../src/evidence/quote.js';
import { applyPipes } from '../../../src/evidence/pipes.js';

const LOG = [
  '2026-11-28T16:35:01.812Z INFO  starting api v2.3.1 (commit 9f2c1e7)',
  '2026-11-28T16:35:01.902Z FATAL invalid HTTP_PORT "8O80": strconv.Atoi: parsing "8O80": invalid syntax',
  'time="2026-11-23T16:38:01Z" level=info msg="connected" dsn="postgres://worker:[REDACTED]@db.shop:5432/orders"',
].join('\n');
const PODS =
  'NAME                 READY   STATUS             RESTARTS      AGE\napi-7d9f-x2k9q       0/1     CrashLoopBackOff   14 (2m ago)   40m\n';

const held = (quote: string, text = LOG): boolean => {
  const q = prepareQuote(quote);
  return q !== undefined && countHeld(q, outputLines(text)) > 0;
};

describe('quoted lines against recorded output', () => {
  it('reads timestamps, typographic quotes and dashes, and masks the same on both sides', () => {
    expect(normalizeLine('Sat, 28 Nov 2026 16:37:14 +0000')).toBe('Sat, 28 Nov 2026 ⟨16:37⟩ +0000');
    expect(normalizeLine('[28/Nov/2026:16:20:11 +0000]')).toBe('[28/Nov/2026:16:20:11 +0000]');
    expect(normalizeLine('2026-11-28 16:35:01,123+01:00 x 16:35 y 09:07:00Z')).toBe(
      '⟨16:35⟩ x ⟨16:35⟩ y ⟨09:07⟩',
    );
    for (const untouched of ['16:35:01:99', '10.0.0.14:8080', 'db.shop:5432', 'at 9:05', '24:00', '12:60'])
      expect(normalizeLine(untouched), untouched).toBe(untouched);
    expect(normalizeLine('2026-11-28T16:35:01.902Z  FATAL')).toBe(normalizeLine('16:35:01 FATAL'));
    expect(normalizeLine('“8O80” — x')).toBe('"8O80" - x');
    expect(normalizeLine('pass=******** and [REDACTED:DB_PASSWORD]')).toBe('pass=∗ and ∗');
  });

  it('finds a line whole, in part, with [...], across a wrap, and joined with the next', () => {
    expect(held('FATAL invalid HTTP_PORT "8O80": strconv.Atoi')).toBe(true);
    expect(held('16:35:01 FATAL invalid HTTP_PORT [...] invalid syntax')).toBe(true);
    expect(held('starting api v2.3.1 (commit 9f2c1e7) 2026-11-28T16:35:01.902Z FATAL invalid')).toBe(true);
    expect(held('FATAL invalid HTTP_PORT "8080"')).toBe(false);
    expect(held('invalid syntax [...] FATAL')).toBe(false);
  });

  it('takes a masked value or the real secret where the record holds [REDACTED]', () => {
    expect(held('dsn="postgres://worker:********@db.shop:5432/orders"')).toBe(true);
    expect(held('msg="connected" dsn="postgres://worker:hunter2-secret@db.shop:5432/orders"')).toBe(true);
    expect(held('msg="connected" dsn="postgres://admin:********@db.shop:5432/orders"')).toBe(false);
    expect(held('msg="connected" dsn="postgres://admin:hunter2@db.shop:5432/orders"')).toBe(false);
  });

  it('takes a table row with columns left out, in order, never out of order', () => {
    expect(held('api-7d9f-x2k9q CrashLoopBackOff 14', PODS)).toBe(true);
    expect(held('NAME STATUS RESTARTS', PODS)).toBe(true);
    expect(held('api-7d9f-x2k9q OOMKilled', PODS)).toBe(false);
    expect(held('CrashLoopBackOff api-7d9f-x2k9q', PODS)).toBe(false);
  });

  it('drops a YAML trailing comment and reads a field path as its last key', () => {
    const yaml = '    limits:\n      memory: 256Mi\n    reason: OOMKilled\n';
    expect(held('memory: 256Mi   # the limit', yaml)).toBe(true);
    expect(held('status.lastState.terminated.reason: OOMKilled', yaml)).toBe(true);
  });

  it('says status words, labels and short strings identify nothing', () => {
    const weak = (q: string) => tooWeak(prepareQuote(q) ?? { raw: q, segments: [], tokens: [], probe: '' });
    expect(weak('Running')).toBe('only status words, labels or numbers');
    expect(weak('Warning')).toBe('only status words, labels or numbers');
    expect(weak('Reason: OOMKilled')).toBe('only status words, labels or numbers');
    expect(weak('api-7d')).toBe('too short to identify a line');
    expect(weak('FATAL invalid HTTP_PORT "8O80"')).toBeUndefined();
    const q = prepareQuote('FATAL invalid HTTP_PORT');
    expect(q && heldAt(q, outputLines(LOG), 1)).toBe('line');
  });
});

describe('pipes re-applied to the recorded output', () => {
  it('grep (-i, -v, -A), head, tail, awk fields and jq paths', () => {
    expect(applyPipes(LOG, ['grep -i fatal'])).toEqual({ kind: 'applied', text: LOG.split('\n')[1] });
    expect(applyPipes(LOG, ['grep -v FATAL', 'head -n 1'])).toEqual({
      kind: 'applied',
      text: LOG.split('\n')[0],
    });
    expect(
      applyPipes(LOG, ['grep -A1 starting']).kind === 'applied' && applyPipes(LOG, ['grep -A1 starting']),
    ).toMatchObject({
      text: LOG.split('\n').slice(0, 2).join('\n'),
    });
    expect(applyPipes(LOG, ['tail -1'])).toEqual({ kind: 'applied', text: LOG.split('\n')[2] });
    expect(applyPipes(PODS, ["awk '{print $1, $3}'"])).toEqual({
      kind: 'applied',
      text: 'NAME STATUS\napi-7d9f-x2k9q CrashLoopBackOff',
    });
    const json = JSON.stringify({
      status: { containerStatuses: [{ name: 'api', lastState: { terminated: { exitCode: 1 } } }] },
    });
    expect(applyPipes(json, ["jq -r '.status.containerStatuses[0].name'"])).toEqual({
      kind: 'applied',
      text: 'api',
    });
    expect(applyPipes(json, ['jq .status.containerStatuses[].lastState.terminated'])).toEqual({
      kind: 'applied',
      text: '{\n  "exitCode": 1\n}',
    });
  });

  it('says what it does not re-create (sort, a jq program beyond paths)', () => {
    expect(applyPipes(LOG, ['sort'])).toEqual({
      kind: 'derived',
      why: 'the output went through `sort`, which the check does not re-create',
    });
    expect(applyPipes('{}', ["jq 'keys'"]).kind).toBe('derived');
  });
});
