import { describe, expect, it } from 'vitest';
import { confidenceIn, isHighConfidence, splitConfidence } from '../../../src/report/confidence.js';

describe('the one confidence reader', () => {
  it('splits "statement — Confidence: X" and keeps percentages', () => {
    expect(splitConfidence('Disk full — Confidence: High')).toEqual({
      statement: 'Disk full',
      confidence: 'High',
    });
    expect(splitConfidence('OOM (confidence 70%)')).toEqual({ statement: 'OOM', confidence: '70%' });
    expect(splitConfidence('No label here')).toEqual({ statement: 'No label here' });
  });

  it('reads "very high", "we have high confidence that…", "high confidence", a level, a percentage before "confident"', () => {
    expect(splitConfidence('The pod is OOMKilled — Confidence: Very High')).toEqual({
      statement: 'The pod is OOMKilled',
      confidence: 'Very High',
    });
    expect(
      splitConfidence('We have high confidence that the api container exits on a bad HTTP_PORT.'),
    ).toEqual({
      statement: 'the api container exits on a bad HTTP_PORT.',
      confidence: 'high',
    });
    expect(splitConfidence('Bad HTTP_PORT value (high confidence)')).toEqual({
      statement: 'Bad HTTP_PORT value',
      confidence: 'high',
    });
    expect(confidenceIn('Confidence level: medium')).toBe('medium');
    expect(confidenceIn('We are 90% confident the node is full')).toBe('90%');
    expect(confidenceIn('confidence is low')).toBe('low');
    expect(confidenceIn('We are highly confident')).toBe('high');
    expect(confidenceIn('the confidence interval of the metric')).toBeUndefined();
  });

  it('calls high what agents mean by it: high, very high, at least 80 %, at least 0.8', () => {
    for (const high of ['high', 'Very high', 'VERY HIGH', '85%', '80 %', '0.9', '1', 'High (85%)'])
      expect(isHighConfidence(high), high).toBe(true);
    for (const low of ['medium', 'low', 'moderate', '60%', '79%', '0.5', 'highly uncertain', undefined])
      expect(isHighConfidence(low), String(low)).toBe(false);
  });
});
