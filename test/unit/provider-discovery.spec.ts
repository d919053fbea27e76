import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdminInputError } from '../../src/cli/admin-command';
import { readDiscovery } from '../../src/cli/commands/provider-discovery';
import { acceptedIssuers, issuedToOneOf, provenClaims } from '../../src/guest/provider-id-tokens';

/** Contract 14: what `provider add` accepts from an issuer's discovery document, and how it authenticates. */
describe('provider discovery', () => {
  let server: Server;
  let issuer = '';
  let doc: Record<string, unknown> = {};
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url !== '/.well-known/openid-configuration') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const base = () => ({
    issuer,
    authorization_endpoint: `${issuer}/auth`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    response_types_supported: ['code', 'id_token'],
    id_token_signing_alg_values_supported: ['ES256', 'RS256'],
  });
  const read = (extra: Record<string, unknown>, opts = { production: false, appleKey: false }) => {
    doc = { ...base(), ...extra };
    return readDiscovery(issuer, opts);
  };

  it('authenticates with client_secret_basic when discovery lists it or lists none, else client_secret_post', async () => {
    expect((await read({})).token_endpoint_auth_method).toBe('client_secret_basic');
    expect((await read({ token_endpoint_auth_methods_supported: [] })).token_endpoint_auth_method).toBe(
      'client_secret_basic',
    );
    expect(
      (await read({ token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'] }))
        .token_endpoint_auth_method,
    ).toBe('client_secret_basic');
    expect(
      (await read({ token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt'] }))
        .token_endpoint_auth_method,
    ).toBe('client_secret_post');
    // Apple's options send the client-secret JWT by client_secret_post, whatever else is listed.
    expect(
      (
        await read(
          { token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'] },
          {
            production: false,
            appleKey: true,
          },
        )
      ).token_endpoint_auth_method,
    ).toBe('client_secret_post');
  });

  it('keeps the endpoints and prefers RS256 for ID tokens, else the first algorithm listed', async () => {
    expect(await read({})).toEqual({
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
      authorization_response_iss_parameter_supported: false,
    });
    expect(
      (await read({ id_token_signing_alg_values_supported: ['none', 'ES256'] })).id_token_signed_response_alg,
    ).toBe('ES256');
  });

  it('keeps whether the issuer names itself in authorization responses (RFC 9207), only when it says true', async () => {
    const kept = async (value: unknown) =>
      (await read({ authorization_response_iss_parameter_supported: value }))
        .authorization_response_iss_parameter_supported;
    expect(await kept(true)).toBe(true);
    expect(await kept('true')).toBe(false);
  });

  it.each([
    ['another issuer named', { issuer: 'https://elsewhere.example' }, /names issuer/],
    ['no code flow', { response_types_supported: ['id_token'] }, /authorization code/],
    ['PKCE without S256', { code_challenge_methods_supported: ['plain'] }, /S256/],
    ['no signed ID token', { id_token_signing_alg_values_supported: ['none'] }, /signing algorithm/],
    ['no JWKS', { jwks_uri: undefined }, /jwks_uri/],
    [
      'an endpoint of another scheme',
      { authorization_endpoint: 'javascript:alert(1)' },
      /no http\(s\) authorization_endpoint/,
    ],
    ['neither basic nor post', { token_endpoint_auth_methods_supported: ['private_key_jwt'] }, /neither/],
  ])('refuses a document with %s', async (_label, extra, message) => {
    await expect(read(extra)).rejects.toThrow(message);
    await expect(read(extra)).rejects.toBeInstanceOf(AdminInputError);
  });

  it('refuses cleartext endpoints beyond loopback in production', async () => {
    await expect(
      read({ token_endpoint: 'http://idp.example/token' }, { production: true, appleKey: false }),
    ).rejects.toThrow(/token_endpoint must use https/);
  });
});

describe('claims a checked ID token proves', () => {
  it('keeps an email only when verified (true, or Apple’s string "true"), lower-cased', () => {
    const exp = 2_000_000_000;
    expect(provenClaims({ sub: 's', exp, email: 'A@Relay.Example', email_verified: 'true' }).verifiedEmail).toBe(
      'a@relay.example',
    );
    expect(provenClaims({ sub: 's', exp, email: 'a@x.example', email_verified: true }).verifiedEmail).toBe(
      'a@x.example',
    );
    expect(provenClaims({ sub: 's', exp, email: 'a@x.example', email_verified: 'false' }).verifiedEmail).toBeNull();
    expect(provenClaims({ sub: 's', exp, email: 'a@x.example' }).verifiedEmail).toBeNull();
    expect(() => provenClaims({ sub: '', exp })).toThrow();
  });
});

describe('issuers an ID token may name', () => {
  it('accepts Google’s schemeless issuer beside its URL, and every other issuer exactly', () => {
    expect(acceptedIssuers('https://accounts.google.com')).toEqual([
      'https://accounts.google.com',
      'accounts.google.com',
    ]);
    expect(acceptedIssuers('https://appleid.apple.com')).toEqual(['https://appleid.apple.com']);
  });
});

describe('the party an ID token was issued to', () => {
  it('asks a token for several audiences for an azp among the clients; a token for one audience is not asked', () => {
    const ours = ['web-client', 'com.acme.game'];
    expect(issuedToOneOf({ aud: ['com.other.game', 'com.acme.game'], azp: 'com.acme.game' }, ours)).toBe(true);
    expect(issuedToOneOf({ aud: ['com.other.game', 'com.acme.game'], azp: 'com.other.game' }, ours)).toBe(false);
    expect(issuedToOneOf({ aud: ['com.other.game', 'com.acme.game'] }, ours)).toBe(false);
    // Google's Android tokens: the web client as the audience, the Android client as azp.
    expect(issuedToOneOf({ aud: 'web-client', azp: 'android-client' }, ours)).toBe(true);
    expect(issuedToOneOf({ aud: ['web-client'] }, ours)).toBe(true);
  });
});
