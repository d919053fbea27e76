import { canonicalWebOrigin, checkRedirectUri, checkWebOrigin, webOriginsOf } from '../../src/directory/web-origins';

describe('web origins (contract section 11)', () => {
  it.each([
    ['https://play.example', 'https://play.example'],
    ['https://Play.Example/', 'https://play.example'],
    ['https://play.example:443', 'https://play.example'],
    ['http://127.0.0.1:3001', 'http://127.0.0.1:3001'],
    ['https://portal.example:8443', 'https://portal.example:8443'],
  ])('canonicalises %s to %s, the form browsers send', (given, origin) => {
    expect(canonicalWebOrigin(given)).toBe(origin);
  });

  it.each([
    'play.example',
    'ftp://play.example',
    'javascript:alert(1)',
    'https://play.example/game',
    'https://play.example?x=1',
    'https://play.example#x',
    'https://user@play.example',
    'https://play.example\\@evil.example',
    'https://',
    'null',
    '*',
  ])('refuses %s', (given) => {
    expect(canonicalWebOrigin(given)).toBeNull();
  });

  it.each([
    ['a redirect URI', () => checkRedirectUri('https://*.play.example/auth', false)],
    ['a web origin', () => checkWebOrigin('https://*.play.example', false)],
    ['a bare wildcard origin', () => checkWebOrigin('https://*', false)],
    ['an escaped wildcard origin', () => checkWebOrigin('https://%2A.play.example', false)],
    ['an escaped wildcard redirect URI', () => checkRedirectUri('https://%2a.play.example/auth', false)],
  ])('refuses a wildcard host in %s, which no browser would ever match', (_label, check) => {
    expect(check()).toEqual({ problem: expect.stringMatching(/wildcard/) });
  });

  it('are the redirect URIs’ origins plus the registered ones, once each, for browser clients only', () => {
    const redirectUris = ['https://play.example/auth', 'https://play.example/other', 'http://127.0.0.1:3001/'];
    expect(webOriginsOf({ type: 'browser', redirectUris, webOrigins: ['https://portal.example'] })).toEqual([
      'https://play.example',
      'http://127.0.0.1:3001',
      'https://portal.example',
    ]);
    expect(webOriginsOf({ type: 'native', redirectUris, webOrigins: [] })).toEqual([]);
  });
});
