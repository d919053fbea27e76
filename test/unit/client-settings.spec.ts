import { checkClientSettings } from '../../src/directory/client-settings';
import { HTTPS_IN_PRODUCTION } from '../../src/config/secure-transport';

/** The one set of client rules, shared by `client create` and the console's POST/PATCH (contract 15). */
describe('checkClientSettings', () => {
  const browser = {
    type: 'browser',
    scopes: ['openid'],
    redirectUris: ['https://play.example/cb'],
    webOrigins: ['https://Portal.Example:443'],
  };

  it('accepts a browser client and canonicalises its web origins, dropping repeats', () => {
    expect(
      checkClientSettings({ ...browser, webOrigins: [...browser.webOrigins, 'https://portal.example'] }, true),
    ).toEqual({
      settings: { ...browser, webOrigins: ['https://portal.example'] },
    });
  });

  it.each([
    [
      'http beyond loopback in production',
      { redirectUris: ['http://play.example/cb'] },
      'redirect_uris',
      HTTPS_IN_PRODUCTION,
    ],
    [
      'a cleartext web origin in production',
      { webOrigins: ['http://portal.example'] },
      'web_origins',
      HTTPS_IN_PRODUCTION,
    ],
    ['a fragment', { redirectUris: ['https://play.example/cb#'] }, 'redirect_uris', 'fragment'],
    [
      'userinfo, masked in the message',
      { redirectUris: ['https://u:secret@play.example/cb'] },
      'redirect_uris',
      '//…@',
    ],
    ['an unknown scope', { scopes: ['openid', 'admin'] }, 'scopes', 'unique values'],
    ['a confidential type', { type: 'confidential' }, 'type', 'browser or native'],
    ['web origins on a native client', { type: 'native' }, 'web_origins', 'only browser clients'],
    ['a browser client without a redirect URI', { redirectUris: [] }, 'redirect_uris', 'needs scopes'],
  ])('refuses %s', (_label, change, field, text) => {
    const checked = checkClientSettings({ ...browser, ...change }, true);
    expect(checked).toEqual({ problem: { field, message: expect.stringContaining(text) } });
    expect(JSON.stringify(checked)).not.toContain('secret');
  });

  it('allows http on loopback in production, and anywhere outside production', () => {
    const loopback = { ...browser, redirectUris: ['http://127.0.0.1:3001/cb'], webOrigins: ['http://localhost:3001'] };
    expect(checkClientSettings(loopback, true)).toEqual({ settings: loopback });
    // Loopback is localhost, all of 127.0.0.0/8 and [::1] (src/config/secure-transport.ts).
    for (const host of ['127.0.0.2', '127.255.0.1', '[::1]']) {
      const other = { ...browser, redirectUris: [`http://${host}:3001/cb`], webOrigins: [`http://${host}:3001`] };
      expect(checkClientSettings(other, true)).toEqual({ settings: other });
    }
    for (const host of ['128.0.0.1', '[::2]', 'localhost.example']) {
      const given = { ...browser, redirectUris: [`http://${host}/cb`] };
      expect(checkClientSettings(given, true)).toEqual({
        problem: { field: 'redirect_uris', message: expect.stringContaining(HTTPS_IN_PRODUCTION) },
      });
    }
    const cleartext = { ...browser, redirectUris: ['http://play.example/cb'], webOrigins: ['http://portal.example'] };
    expect(checkClientSettings(cleartext, false)).toEqual({ settings: cleartext });
  });
});
