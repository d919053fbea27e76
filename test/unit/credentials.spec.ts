import fc from 'fast-check';
import { parseBasicCredentials } from '../../src/management-auth/basic-credentials';
import { parseBearer } from '../../src/http/bearer-token';
import { pkceMatches } from '../../src/management-auth/pkce';
import { readCookie } from '../../src/http/cookies';

const basic = (raw: string): string => `Basic ${Buffer.from(raw, 'utf8').toString('base64')}`;

describe('HTTP Basic parsing (RFC 7617 / RFC 6749 2.3.1)', () => {
  it('splits once at the first colon and keeps the rest of the secret', () => {
    expect(parseBasicCredentials(basic('cli_a:se:cr:et'))).toEqual({ clientId: 'cli_a', secret: 'se:cr:et' });
  });

  it('form-URL-decodes both halves', () => {
    expect(parseBasicCredentials(basic('cli%5Fa:a%2Bb+c'))).toEqual({ clientId: 'cli_a', secret: 'a+b c' });
  });

  it.each([
    ['missing header', undefined],
    ['other scheme', 'Bearer abc'],
    ['no colon', basic('cli_a')],
    ['empty id', basic(':secret')],
    ['empty secret', basic('cli_a:')],
    ['non-canonical base64', 'Basic Y2xpX2E6c2VjcmV0=='],
    ['bad percent-encoding', basic('cli_a:%E0%A4%A')],
    ['two spaces', `Basic  ${Buffer.from('a:b').toString('base64')}`],
  ])('refuses %s', (_name, header) => {
    expect(parseBasicCredentials(header)).toBeNull();
  });

  it('round-trips any id and secret that a client encodes per RFC 6749', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        (id, secret) => {
          const header = basic(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`);
          expect(parseBasicCredentials(header)).toEqual({ clientId: id, secret });
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });
});

describe('Bearer parsing', () => {
  it('accepts one b64token and nothing else', () => {
    expect(parseBearer('Bearer abc.def-ghi_jkl')).toBe('abc.def-ghi_jkl');
    expect(parseBearer('Bearer a b')).toBeNull();
    expect(parseBearer('Bearer ')).toBeNull();
    expect(parseBearer('Basic abc')).toBeNull();
    expect(parseBearer(`Bearer ${'a'.repeat(9000)}`)).toBeNull();
  });
});

describe('PKCE S256', () => {
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'; // RFC 7636 appendix B

  it('matches the RFC 7636 example', () => {
    expect(pkceMatches(verifier, challenge)).toBe(true);
  });

  it('refuses a wrong, short or missing verifier', () => {
    expect(pkceMatches(verifier.replace('d', 'e'), challenge)).toBe(false);
    expect(pkceMatches('short', challenge)).toBe(false);
    expect(pkceMatches(undefined, challenge)).toBe(false);
  });
});

describe('cookie reading', () => {
  it('finds one cookie and refuses duplicates and odd characters', () => {
    expect(readCookie('a=1; __Host-x=abc', '__Host-x')).toBe('abc');
    expect(readCookie('__Host-x=abc; __Host-x=def', '__Host-x')).toBeUndefined();
    expect(readCookie('__Host-x=a\u0000b', '__Host-x')).toBeUndefined();
    expect(readCookie(undefined, '__Host-x')).toBeUndefined();
  });
});
