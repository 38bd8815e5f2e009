import { describe, expect, it } from 'vitest';
import {
  checkSession,
  cookieValue,
  SESSION_TTL_MS,
  sessionValue,
  validSession,
} from '../../../src/server/session.js';

// The status page's session cookie: made from the token, checked without storing anything.

const TOKEN = 'tok-0123456789abcdef';
const NOW = 1_800_000_000_000;
const request = (over: Partial<Parameters<typeof checkSession>[0]> = {}) => ({
  method: 'GET',
  url: '/',
  cookie: undefined,
  authorization: undefined,
  secure: false,
  ...over,
});

describe('status page session', () => {
  it('accepts its own cookie until it expires, and not after', () => {
    const value = sessionValue(TOKEN, NOW);
    expect(validSession(value, TOKEN, NOW + 1000)).toBe(true);
    expect(validSession(value, TOKEN, NOW + SESSION_TTL_MS + 1)).toBe(false);
  });

  it('refuses a cookie made with another token, or with its expiry edited', () => {
    const value = sessionValue(TOKEN, NOW);
    expect(validSession(value, 'another-token', NOW)).toBe(false);
    const [expires, mac] = value.split('.') as [string, string];
    expect(validSession(`${Number(expires) + 1000}.${mac}`, TOKEN, NOW)).toBe(false);
    expect(validSession('garbage', TOKEN, NOW)).toBe(false);
  });

  it('never carries the token itself', () => {
    expect(sessionValue(TOKEN, NOW)).not.toContain(TOKEN);
  });

  it('exchanges ?token= for an HttpOnly, SameSite=Strict cookie and redirects without it', () => {
    const check = checkSession(request({ url: '/?state=failed&token=' + TOKEN }), TOKEN, NOW);
    expect(check.kind).toBe('exchange');
    if (check.kind !== 'exchange') return;
    expect(check.location).toBe('/?state=failed');
    expect(check.cookie).toMatch(
      /^triage_session=\d+\.[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/,
    );
    expect(checkSession(request({ url: '/?token=x', secure: true }), 'x', NOW)).toMatchObject({
      cookie: expect.stringMatching(/; Secure$/),
    });
  });

  it('denies a wrong ?token= and asks for the bearer header without a session', () => {
    expect(checkSession(request({ url: '/?token=wrong' }), TOKEN, NOW).kind).toBe('denied');
    expect(checkSession(request(), TOKEN, NOW).kind).toBe('bearer');
  });

  it('accepts the cookie on GET and HEAD only: a POST needs the bearer header', () => {
    const cookie = `other=1; triage_session=${sessionValue(TOKEN, NOW)}`;
    expect(cookieValue(cookie)).toBe(sessionValue(TOKEN, NOW));
    expect(checkSession(request({ cookie }), TOKEN, NOW).kind).toBe('ok');
    expect(checkSession(request({ cookie, method: 'HEAD' }), TOKEN, NOW).kind).toBe('ok');
    expect(checkSession(request({ cookie, method: 'POST' }), TOKEN, NOW).kind).toBe('bearer');
  });
});
