import { whileIdentityWriteRefused } from '../../support/postgres-outage';
import { IdentityEmailDigest } from '../../../src/directory/identity-email-digest';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { GuestClient } from '../../../sdk/src/guest-client';
import { DataSource } from 'typeorm';
import { IdentityIssuer1764000021000 } from '../../../migrations/1764000021000-identity-issuer';
import {
  IdentityProvidersRepository,
  type IdentityProvider,
  type ProviderEndpoints,
} from '../../../src/directory/identity-providers.repository';
import { admin } from '../../support/admin-cli';
import { appleTeam, TestBrowser } from '../../support/oidc-issuer';
import { emailProof, startGuestWorld, twoSiteClient, type GuestWorld } from '../../support/guest-fixtures';
import {
  addProvider,
  browserWithFlow,
  NATIVE_APP_ID,
  nativeIdToken,
  startProviders,
  type ProviderWorld,
} from '../../support/provider-fixtures';

describe('OpenID Connect providers (contract 14) against real issuers (oidc-provider)', () => {
  let w: GuestWorld;
  let p: ProviderWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    p = await startProviders(w);
  });
  afterAll(async () => {
    await p.stop();
    await w.close();
  });

  const newFlowId = () => `flw_${randomBytes(18).toString('base64url')}`;
  const now = () => Math.floor(Date.now() / 1000);
  const proofKeys = async () => (await w.t.redisKeys()).filter((k) => k.includes(':prf:'));
  const identityRows = async (provider: string, subject: string) =>
    (
      await w.t.pg.query(
        `SELECT user_id, email, email_digest FROM identities WHERE provider = $1 AND provider_subject = $2`,
        [provider, subject],
      )
    ).rows;

  /** A provider of acme at the plain issuer, with the endpoints a test points elsewhere. */
  const providerRow = (id: string, endpoints: Partial<ProviderEndpoints>): IdentityProvider => ({
    tenantId: 'acme',
    id,
    issuer: p.plain.issuer,
    clientId: 'web-client',
    scopes: ['openid'],
    nativeClientIds: [],
    endpoints: {
      authorization_endpoint: `${p.plain.issuer}/auth`,
      token_endpoint: `${p.plain.issuer}/token`,
      jwks_uri: `${p.plain.issuer}/jwks`,
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
      ...endpoints,
    },
    credential: { kind: 'client_secret', secret: 'web-secret' },
  });

  /** `GET providers/{id}/start` with the flow cookie: the redirect to the issuer. */
  async function startAtProvider(c: GuestClient, providerId: string): Promise<URL> {
    const start = new URL(c.providerStartUrl(providerId));
    const res = await w.t
      .auth()
      .get(start.pathname + start.search)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .expect(302);
    return new URL(res.headers.location as string);
  }

  /** A new guest signs in at the plain issuer as `sub`: its answer, stopped at the service's callback. */
  async function answerFromIssuer(providerId: string, sub: string): Promise<{ c: GuestClient; callback: URL }> {
    const c = w.client();
    await c.createGuest();
    await p.plain.setAccount({ sub });
    const atIssuer = await startAtProvider(c, providerId);
    // A browser that knows only the issuer stops at the service's callback.
    return { c, callback: new URL(await new TestBrowser(['127.0.0.1']).navigate(atIssuer.toString())) };
  }

  /** `c`'s browser at the callback with the issuer's `answer`: back to the game with an error, no proof. */
  async function expectRefusedCallback(c: GuestClient, answer: URL, provider: string, subject: string): Promise<void> {
    const before = await proofKeys();
    const res = await w.t
      .auth()
      .get(answer.pathname + answer.search)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .expect(302);
    expect(res.headers.location).toBe('https://play.acme.example/auth?error=server_error');
    expect(await proofKeys()).toEqual(before);
    expect(await identityRows(provider, subject)).toEqual([]);
  }

  /** The browser flow from `GET providers/{id}/start` to the game's redirect URI. */
  async function browserRound(c: GuestClient, providerId: string): Promise<URL> {
    const browser = browserWithFlow(c.browserFlowId, c.flowCookie());
    return new URL(await browser.navigate(c.providerStartUrl(providerId)));
  }

  describe('admin CLI', () => {
    it('lists the providers without any secret; seals the secret and the Apple key at rest; audits the change', async () => {
      const listed = await admin(w.t.env, 'provider', 'list', '--tenant', 'acme');
      expect(listed.status).toBe(0);
      expect(listed.out).toEqual({
        providers: [
          {
            id: 'apple',
            issuer: p.apple.issuer,
            client_id: 'com.acme.web',
            scopes: ['openid', 'email'],
            native_client_ids: [],
          },
          {
            id: 'google',
            issuer: p.plain.issuer,
            client_id: 'web-client',
            scopes: ['openid', 'email'],
            native_client_ids: [NATIVE_APP_ID],
          },
        ],
      });
      expect(listed.stdout).not.toContain('web-secret');
      const rows = await w.t.pg.query(`SELECT id, secret_sealed, metadata FROM identity_providers ORDER BY id`);
      for (const row of rows.rows) {
        expect(row.secret_sealed).not.toContain('web-secret');
        expect(row.secret_sealed).not.toContain('PRIVATE KEY');
      }
      expect(rows.rows.map((r) => [r.id, r.metadata.token_endpoint_auth_method])).toEqual([
        ['apple', 'client_secret_post'],
        ['google', 'client_secret_basic'],
      ]);
      const audit = await w.t.pg.query(
        `SELECT subject, data FROM audit_events WHERE type = 'admin.provider.add' ORDER BY subject`,
      );
      expect(audit.rows.map((r) => r.subject)).toEqual(['apple', 'google']);
      expect(JSON.stringify(audit.rows)).not.toMatch(/web-secret|PRIVATE KEY/);
    });

    it('refuses an issuer whose discovery cannot be read or does not match, and stores nothing', async () => {
      const missing = await addProvider(
        w,
        'broken',
        `${p.plain.issuer}/nowhere`,
        'x',
        '--client-secret-file',
        p.file('s'),
      );
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toMatch(/--issuer/);
      // The discovery document names another issuer than the one given.
      const mismatch = await addProvider(w, 'broken', `${p.plain.issuer}/`, 'x', '--client-secret-file', p.file('s'));
      expect(mismatch.status).not.toBe(0);
      expect(mismatch.stderr).toMatch(/names issuer/);
      const duplicate = await p.addPlain('google');
      expect(duplicate.status).not.toBe(0);
      const mixed = await p.addPlain('mixed', '--apple-team-id', 'TEAM123456');
      expect(mixed.status).not.toBe(0);
      expect((await w.t.pg.query(`SELECT id FROM identity_providers ORDER BY id`)).rows).toEqual([
        { id: 'apple' },
        { id: 'google' },
      ]);
    });

    it('removes a provider; an unknown one is an error', async () => {
      expect((await p.addPlain('twitch')).status).toBe(0);
      const removed = await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'twitch');
      expect(removed).toMatchObject({ status: 0, out: { removed: { tenant: 'acme', id: 'twitch' } } });
      const audit = await w.t.pg.query(
        `SELECT tenant_id, subject FROM audit_events WHERE type = 'admin.provider.remove' AND subject = 'twitch'`,
      );
      expect(audit.rows).toEqual([{ tenant_id: 'acme', subject: 'twitch' }]);
      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'twitch')).status).not.toBe(0);
      const left = await admin(w.t.env, 'provider', 'list', '--tenant', 'acme');
      expect(left.out.providers.map((x: { id: string }) => x.id)).toEqual(['apple', 'google']);
    });
  });

  describe('native flow', () => {
    it('upgrades a guest with an ID token the platform SDK obtained for the native app (aud a native client id, nonce checked)', async () => {
      const c = w.client();
      const created = await c.createGuest();
      await c.createLinkingIntent();
      const nonce = randomBytes(12).toString('base64url');
      const idToken = await nativeIdToken(
        p.plain,
        { sub: 'native-1', email: 'Native@Example.com', email_verified: true },
        nonce,
      );
      const proof = await c.providerToken('google', idToken, nonce);
      expect(proof.expires_in).toBe(300);
      const upgraded = await c.upgrade(proof.proof_id);
      expect(upgraded).toMatchObject({
        user_id: created.user_id,
        linked_identity: { provider: 'google', provider_subject: 'native-1', email: 'native@example.com' },
      });
      // The verified address is found by its digest (issue 26).
      expect(await identityRows('google', 'native-1')).toEqual([
        {
          user_id: created.user_id,
          email: 'native@example.com',
          email_digest: w.t.app.get(IdentityEmailDigest).candidates('native@example.com')[0],
        },
      ]);
      expect(await c.me()).toMatchObject({
        guest: false,
        identities: [{ provider: 'google', provider_subject: 'native-1' }],
      });
    });

    it('refuses a token for another audience, one for several issued to another client, an expired one, a wrong nonce, a wrong issuer and an unknown kid: 400 invalid_grant, nothing written', async () => {
      const base = () => ({
        iss: p.plain.issuer,
        aud: NATIVE_APP_ID,
        sub: 'refused-1',
        iat: now(),
        exp: now() + 300,
        nonce: 'the-nonce',
        email: 'refused@example.com',
        email_verified: true,
      });
      const cases: Array<[string, string, string | undefined]> = [
        ['another audience', await p.plain.sign({ ...base(), aud: 'com.other.game' }), 'the-nonce'],
        // OpenID Connect Core 3.1.3.7: a token for several audiences names the one it was issued to.
        [
          'several audiences, no azp',
          await p.plain.sign({ ...base(), aud: ['com.other.game', NATIVE_APP_ID] }),
          'the-nonce',
        ],
        [
          'several audiences, issued to another client',
          await p.plain.sign({ ...base(), aud: ['com.other.game', NATIVE_APP_ID], azp: 'com.other.game' }),
          'the-nonce',
        ],
        ['expired', await p.plain.sign({ ...base(), iat: now() - 900, exp: now() - 600 }), 'the-nonce'],
        ['wrong nonce', await p.plain.sign(base()), 'another-nonce'],
        ['issued in the future', await p.plain.sign({ ...base(), iat: now() + 600, exp: now() + 900 }), 'the-nonce'],
        ['wrong issuer', await p.plain.sign({ ...base(), iss: p.apple.issuer }), 'the-nonce'],
        ['unknown kid', await p.plain.sign(base(), { foreign: true }), 'the-nonce'],
      ];
      const before = await proofKeys();
      for (const [label, idToken, nonce] of cases) {
        const flowId = newFlowId();
        const res = await w.t
          .auth()
          .post('/t/acme/providers/google/token')
          .send({ client_id: 'cli_game', browser_flow_id: flowId, id_token: idToken, nonce });
        expect([label, res.status, res.body.error]).toEqual([label, 400, 'invalid_grant']);
        // No flow claimed (no cookie), no proof, no user.
        expect(res.headers['set-cookie']).toBeUndefined();
        expect((await w.t.redisKeys()).filter((k) => k.includes(flowId))).toEqual([]);
      }
      expect(await proofKeys()).toEqual(before);
      expect(await identityRows('google', 'refused-1')).toEqual([]);
      // The same claims, well formed, are accepted: the refusals above were the checks at work.
      const good = await w.t
        .auth()
        .post('/t/acme/providers/google/token')
        .send({
          client_id: 'cli_game',
          browser_flow_id: newFlowId(),
          id_token: await p.plain.sign(base()),
          nonce: 'the-nonce',
        });
      expect(good.status).toBe(200);
    });

    it('an ID token proves a sign-in once, also under parallel requests', async () => {
      const idToken = await p.plain.sign({
        iss: p.plain.issuer,
        aud: 'web-client',
        sub: 'parallel-1',
        iat: now(),
        exp: now() + 300,
      });
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          w.t
            .auth()
            .post('/t/acme/providers/google/token')
            .send({ client_id: 'cli_game', browser_flow_id: newFlowId(), id_token: idToken }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
      expect(answers.filter((a) => a.status === 400).every((a) => a.body.error === 'invalid_grant')).toBe(true);
      expect(await identityRows('google', 'parallel-1')).toHaveLength(1);
    });

    it('an ID token proves a sign-in once however its signature is spelled', async () => {
      // The last character of a base64url signature carries unused low bits: flipping one spells
      // the same signature differently, and it still verifies.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const respelled = (jwt: string): string => jwt.slice(0, -1) + alphabet[alphabet.indexOf(jwt.slice(-1)) ^ 1];
      const token = (sub: string) =>
        p.plain.sign({ iss: p.plain.issuer, aud: 'web-client', sub, iat: now(), exp: now() + 300 });
      const present = (idToken: string) =>
        w.t
          .auth()
          .post('/t/acme/providers/google/token')
          .send({ client_id: 'cli_game', browser_flow_id: newFlowId(), id_token: idToken });

      const first = await token('respelled-1');
      expect((await present(respelled(first))).status).toBe(200);
      const again = await present(first);
      expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);

      const second = await token('respelled-2');
      expect((await present(second)).status).toBe(200);
      const copy = await present(respelled(second));
      expect([copy.status, copy.body.error]).toEqual([400, 'invalid_grant']);
      expect(await identityRows('google', 'respelled-2')).toHaveLength(1);
    });

    it('an issuer whose keys cannot be read: 503 temporarily_unavailable, nothing written', async () => {
      await w.t.app
        .get(IdentityProvidersRepository)
        .add(providerRow('unreachable', { jwks_uri: 'http://127.0.0.1:9/jwks' }));
      const idToken = await p.plain.sign({
        iss: p.plain.issuer,
        aud: 'web-client',
        sub: 'down-1',
        iat: now(),
        exp: now() + 300,
      });
      const flowId = newFlowId();
      const res = await w.t
        .auth()
        .post('/t/acme/providers/unreachable/token')
        .send({ client_id: 'cli_game', browser_flow_id: flowId, id_token: idToken });
      expect([res.status, res.body.error]).toEqual([503, 'temporarily_unavailable']);
      expect((await w.t.redisKeys()).filter((k) => k.includes(flowId))).toEqual([]);
      expect(await identityRows('unreachable', 'down-1')).toEqual([]);
    });

    it('an ID token refused with 503 after its checks is not spent: the retry with it succeeds', async () => {
      // PostgreSQL refuses the identity's row (a serialization failure) after the token was
      // checked and every read before it succeeded: a fault of the moment, not of the token.
      const idToken = await p.plain.sign({
        iss: p.plain.issuer,
        aud: NATIVE_APP_ID,
        sub: 'flaky-1',
        iat: now(),
        exp: now() + 300,
      });
      const flowId = newFlowId();
      const present = () =>
        w.t
          .auth()
          .post('/t/acme/providers/google/token')
          .send({ client_id: 'cli_game', browser_flow_id: flowId, id_token: idToken });
      await whileIdentityWriteRefused(w.t.pg, 'INSERT', 'flaky-1', async () => {
        const refused = await present();
        expect([refused.status, refused.body.error, refused.headers['set-cookie']]).toEqual([
          503,
          'temporarily_unavailable',
          undefined,
        ]);
      });
      const retried = await present();
      expect([retried.status, retried.body.proof_id]).toEqual([200, expect.stringMatching(/^prf_/)]);
      expect(await identityRows('google', 'flaky-1')).toHaveLength(1);
    });

    it('a provider proof signs in once under parallel requests', async () => {
      const c = w.client();
      await c.createGuest();
      const idToken = await p.plain.sign({
        iss: p.plain.issuer,
        aud: 'web-client',
        sub: 'once-1',
        iat: now(),
        exp: now() + 300,
      });
      const proof = await c.providerToken('google', idToken);
      const cookie = `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          w.t
            .auth()
            .post('/t/acme/sign-in')
            .set('Cookie', cookie)
            .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof.proof_id }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400]);
    });

    it('a sign-in with another verified email refreshes the identity’s email and digest; an unverified or absent one does not; nothing merges', async () => {
      const token = (claims: Record<string, unknown>) =>
        p.plain.sign({
          iss: p.plain.issuer,
          aud: 'web-client',
          sub: 'moving-1',
          jti: randomBytes(8).toString('hex'),
          iat: now(),
          exp: now() + 300,
          ...claims,
        });
      const signIn = async (claims: Record<string, unknown>) => {
        const c = w.client();
        await c.createGuest();
        return c.signIn((await c.providerToken('google', await token(claims))).proof_id);
      };
      const digest = (address: string) => w.t.app.get(IdentityEmailDigest).candidates(address)[0];
      const c = w.client();
      const created = await c.createGuest();
      await c.createLinkingIntent();
      await c.upgrade(
        (await c.providerToken('google', await token({ email: 'Old@Example.com', email_verified: true }))).proof_id,
      );
      // Another player holds the new address as an email identity: it stays theirs.
      const holder = w.client();
      await holder.createGuest();
      await holder.createLinkingIntent();
      const held = await holder.upgrade(await emailProof(w, holder, 'moved@example.com'));

      const moved = await signIn({ email: 'Moved@Example.com', email_verified: true });
      expect(moved.user_id).toBe(created.user_id);
      const refreshed = [
        { user_id: created.user_id, email: 'moved@example.com', email_digest: digest('moved@example.com') },
      ];
      expect(await identityRows('google', 'moving-1')).toEqual(refreshed);
      expect(await identityRows('email', 'moved@example.com')).toEqual([
        { user_id: held.user_id, email: 'moved@example.com', email_digest: digest('moved@example.com') },
      ]);

      // An address the issuer did not verify, or none, changes nothing.
      expect((await signIn({ email: 'unverified@example.com', email_verified: false })).user_id).toBe(created.user_id);
      expect((await signIn({})).user_id).toBe(created.user_id);
      expect(await identityRows('google', 'moving-1')).toEqual(refreshed);
    });

    it('refuses malformed bodies before checking anything: unknown fields, a token that is no JWT', async () => {
      const send = (body: Record<string, unknown>) =>
        w.t
          .auth()
          .post('/t/acme/providers/google/token')
          .send({ client_id: 'cli_game', browser_flow_id: newFlowId(), ...body });
      expect((await send({ id_token: 'a.b.c', extra: 1 })).body.error).toBe('invalid_request');
      expect((await send({ id_token: 'not a jwt' })).body.error).toBe('invalid_request');
      expect((await send({})).body.error).toBe('invalid_request');
      expect((await w.t.auth().post('/t/acme/providers/Bad_Id/token').send({})).status).toBe(404);
    });

    it('a provider id is not re-added for another issuer while players it signed in keep identities', async () => {
      expect((await p.addPlain('epic')).status).toBe(0);
      const c = w.client();
      await c.createGuest();
      await c.createLinkingIntent();
      const nonce = randomBytes(12).toString('base64url');
      const idToken = await nativeIdToken(
        p.plain,
        { sub: 'epic-1', email: 'epic@example.com', email_verified: true },
        nonce,
      );
      await c.upgrade((await c.providerToken('epic', idToken, nonce)).proof_id);
      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'epic')).status).toBe(0);

      // Another issuer's `epic-1` is another person: it must never reach this player's account.
      const elsewhere = await addProvider(
        w,
        'epic',
        p.apple.issuer,
        'com.acme.web',
        '--client-secret-file',
        p.file('s\n'),
      );
      expect(elsewhere.status).not.toBe(0);
      expect(elsewhere.stderr).toContain('another issuer');
      const listed = await admin(w.t.env, 'provider', 'list', '--tenant', 'acme');
      expect(listed.out.providers.map((x: { id: string }) => x.id)).not.toContain('epic');

      // The same issuer again is the operator undoing a removal: allowed.
      expect((await p.addPlain('epic')).status).toBe(0);
      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'epic')).status).toBe(0);
    });

    it('identities proved before issuers were recorded take their registered provider’s issuer (migration)', async () => {
      expect((await p.addPlain('legacy')).status).toBe(0);
      await w.t.pg.query(
        `INSERT INTO users (id, tenant_id, kind, status) VALUES ('usr_LegacyIssuer000000001', 'acme', 'regular', 'active')`,
      );
      await w.t.pg.query(
        `INSERT INTO identities (id, tenant_id, user_id, provider, provider_subject, email_verified, status, metadata)
         VALUES ('idn_LegacyIssuer000000001', 'acme', 'usr_LegacyIssuer000000001', 'legacy', 'old-1', false, 'active', '{}'),
                ('idn_LegacyIssuer000000002', 'acme', 'usr_LegacyIssuer000000001', 'gone', 'old-2', false, 'active', '{}')`,
      );
      const runner = w.t.app.get(DataSource).createQueryRunner();
      try {
        await new IdentityIssuer1764000021000().up(runner);
      } finally {
        await runner.release();
      }
      const issuers = await w.t.pg.query(
        `SELECT provider, metadata->>'issuer' AS issuer FROM identities WHERE user_id = 'usr_LegacyIssuer000000001' ORDER BY provider`,
      );
      // A provider no longer registered leaves its identities without an issuer, which blocks nothing.
      expect(issuers.rows).toEqual([
        { provider: 'gone', issuer: null },
        { provider: 'legacy', issuer: p.plain.issuer },
      ]);
      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'legacy')).status).toBe(0);
      expect((await p.addPlain('legacy')).status).toBe(0);
      // The issuer recorded now blocks another one.
      const elsewhere = await addProvider(
        w,
        'legacy',
        p.apple.issuer,
        'com.acme.web',
        '--client-secret-file',
        p.file('s\n'),
      );
      expect(elsewhere.status).not.toBe(0);
      expect((await p.addPlain('gone')).status).toBe(0);
      for (const id of ['legacy', 'gone'])
        expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', id)).status).toBe(0);
    });

    it('an unknown provider is 404', async () => {
      const res = await w.t
        .auth()
        .post('/t/acme/providers/nobody/token')
        .send({ client_id: 'cli_game', browser_flow_id: newFlowId(), id_token: 'a.b.c' });
      expect(res.status).toBe(404);
    });
  });

  describe('browser flow', () => {
    it('signs in at the issuer (code, PKCE S256, state, nonce) and upgrades the guest with the proof', async () => {
      const c = w.client();
      const created = await c.createGuest();
      await c.createLinkingIntent();
      await p.plain.setAccount({ sub: 'browser-1', email: 'browser@example.com', email_verified: true });
      const to = await startAtProvider(c, 'google');
      expect(`${to.origin}${to.pathname}`).toBe(`${p.plain.issuer}/auth`);
      expect(to.searchParams.get('code_challenge_method')).toBe('S256');
      expect(to.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(to.searchParams.get('redirect_uri')).toBe(`${w.t.authOrigin}/t/acme/providers/callback`);

      const back = await browserRound(c, 'google');
      expect(`${back.origin}${back.pathname}`).toBe('https://play.acme.example/auth');
      const upgraded = await c.upgrade(GuestClient.providerRedirectResult(back.toString()).proof_id);
      expect(upgraded).toMatchObject({
        user_id: created.user_id,
        linked_identity: { provider: 'google', provider_subject: 'browser-1', email: 'browser@example.com' },
      });
      const requests = await p.plain.tokenRequests();
      expect(requests.at(-1)).toEqual({ auth: 'client_secret_basic', code_verifier: true });
    });

    it('a page’s authorize URL goes through the bounce: the browser that follows it finishes the flow', async () => {
      const c = w.client();
      await c.createGuest();
      await p.plain.setAccount({ sub: 'page-1' });
      const url = await c.providerAuthorizeUrl('google');
      expect(new URL(url).pathname).toBe('/t/acme/providers/go');
      // Whoever follows a page's link must approve it at the provider: without `prompt=consent`, an
      // issuer that knows the account answers at once, and a link sent to a victim completes unseen.
      // The flow owner's own top-level start needs no such step.
      expect((await startAtProvider(c, 'google')).searchParams.get('prompt')).toBeNull();
      const other = await c.providerAuthorizeUrl('google');
      const bounced = await w.t
        .auth()
        .get(new URL(other).pathname + new URL(other).search)
        .expect(302);
      expect(new URL(bounced.headers.location as string).searchParams.get('prompt')).toBe('consent');
      // A browser without the flow cookie (the page's partition is elsewhere) follows the link.
      const back = new URL(await browserWithFlow(c.browserFlowId, undefined).navigate(url));
      const proof = GuestClient.providerRedirectResult(back.toString());
      const signedIn = await c.signIn(proof.proof_id);
      expect(signedIn.user_id).toMatch(/^usr_/);
      expect(await identityRows('google', 'page-1')).toEqual([
        { user_id: signedIn.user_id, email: null, email_digest: null },
      ]);
    });

    it('a page’s flow returns to the redirect URI on that page’s origin, of several the client registered', async () => {
      const { clientId, game } = await twoSiteClient(w);
      await p.plain.setAccount({ sub: 'two-sites-1' });
      const id = newFlowId();
      const body = { client_id: clientId, browser_flow_id: id };
      const guest = await w.t.auth().post('/t/acme/guest').set('Origin', game).send(body).expect(201);
      const flowCookie = ([] as string[])
        .concat(guest.headers['set-cookie'] ?? [])
        .find((c) => c.startsWith(`__Host-svc_flow_${id}=`))
        ?.split(';')[0] as string;
      const start = await w.t
        .auth()
        .post('/t/acme/providers/google/start')
        .set('Origin', game)
        .set('Cookie', flowCookie)
        .send(body)
        .expect(200);
      const back = new URL(await browserWithFlow(id, undefined).navigate(start.body.authorize_url as string));
      expect(`${back.origin}${back.pathname}`).toBe(`${game}/auth`);
      expect(back.searchParams.get('proof_id')).toMatch(/^prf_/);
    });

    it('Sign in with Apple: form_post callback, client-secret JWT by client_secret_post, private-relay email sent once with email_verified "true"', async () => {
      const relay = `${randomBytes(5).toString('hex')}@privaterelay.appleid.com`;
      await p.apple.setAccount({ sub: '001234.apple', email: relay, email_verified: true });
      const c = w.client();
      const created = await c.createGuest();
      await c.createLinkingIntent();
      const atIssuer = await startAtProvider(c, 'apple');
      expect(atIssuer.searchParams.get('response_mode')).toBe('form_post');
      // Apple takes no `prompt`; its own sheet asks the person on every request, bounced or not.
      const link = new URL(await c.providerAuthorizeUrl('apple'));
      const bounced = await w.t
        .auth()
        .get(link.pathname + link.search)
        .expect(302);
      expect(new URL(bounced.headers.location as string).searchParams.has('prompt')).toBe(false);
      const back = await browserRound(c, 'apple');
      const upgraded = await c.upgrade(GuestClient.providerRedirectResult(back.toString()).proof_id);
      expect(upgraded.linked_identity).toEqual({ provider: 'apple', provider_subject: '001234.apple', email: relay });
      // The issuer checked the ES256 client secret, sent by client_secret_post.
      expect((await p.apple.tokenRequests()).map((r) => r.auth)).toEqual(['client_secret_post']);

      // The next sign-in carries no email; the identity keeps the one Apple sent the first time.
      const again = w.client();
      await again.createGuest();
      const second = await browserRound(again, 'apple');
      const signedIn = await again.signIn(GuestClient.providerRedirectResult(second.toString()).proof_id);
      expect(signedIn.user_id).toBe(created.user_id);
      expect(await identityRows('apple', '001234.apple')).toEqual([
        {
          user_id: created.user_id,
          email: relay,
          email_digest: w.t.app.get(IdentityEmailDigest).candidates(relay)[0],
        },
      ]);
    });

    it('Sign in with Apple refuses a client secret signed with another key: the flow ends with error, no proof', async () => {
      const other = appleTeam(p.team.teamId, p.team.keyId);
      const added = await addProvider(
        w,
        'apple-wrong-key',
        p.apple.issuer,
        'com.acme.web',
        '--apple-team-id',
        other.teamId,
        '--apple-key-id',
        other.keyId,
        '--apple-private-key-file',
        p.file(other.privateKeyPem),
      );
      expect(added.status).toBe(0);
      await p.apple.setAccount({ sub: 'wrong-key-1' });
      const c = w.client();
      await c.createGuest();
      const before = await proofKeys();
      expect((await browserRound(c, 'apple-wrong-key')).toString()).toBe(
        'https://play.acme.example/auth?error=server_error',
      );
      expect(await proofKeys()).toEqual(before);
      expect(await identityRows('apple-wrong-key', 'wrong-key-1')).toEqual([]);
    });

    it('the form_post callback needs no Origin of a client, but the state stays bound to the browser', async () => {
      const c = w.client();
      await c.createGuest();
      const atIssuer = await startAtProvider(c, 'apple');
      const state = atIssuer.searchParams.get('state') as string;
      const posted = await w.t
        .auth()
        .post('/t/acme/providers/callback')
        .set('Origin', 'https://appleid.apple.com')
        .type('form')
        .send({ code: 'c0de', state, user: '{"name":{"firstName":"A"}}' })
        .expect(303);
      const resumed = new URL(posted.headers.location as string);
      expect(resumed.pathname).toBe('/t/acme/providers/callback');
      expect(Object.fromEntries(resumed.searchParams)).toEqual({ code: 'c0de', state });
      // Another browser (no flow cookie) following it is refused, back at the game.
      const other = await w.t
        .auth()
        .get(resumed.pathname + resumed.search)
        .expect(302);
      expect(other.headers.location).toBe('https://play.acme.example/auth?error=access_denied');
    });

    it('refuses an answer without iss from an issuer whose discovery says it names itself (RFC 9207): error, no proof', async () => {
      const { c, callback } = await answerFromIssuer('google', 'no-iss-1');
      // The issuer names itself in every answer, as its discovery document says.
      expect(callback.searchParams.get('iss')).toBe(p.plain.issuer);
      // An answer without it did not come from this issuer's authorization endpoint (a mix-up).
      callback.searchParams.delete('iss');
      await expectRefusedCallback(c, callback, 'google', 'no-iss-1');
    });

    it('provider rediscover keeps what discovery says now: a provider added before RFC 9207 was kept then refuses an answer without iss', async () => {
      expect((await p.addPlain('legacy-iss')).status).toBe(0);
      // As a provider added before the flag was kept: its answers are checked for iss only when present.
      await w.t.pg.query(
        `UPDATE identity_providers SET metadata = metadata - 'authorization_response_iss_parameter_supported' WHERE id = 'legacy-iss'`,
      );
      const before = await answerFromIssuer('legacy-iss', 'legacy-iss-1');
      before.callback.searchParams.delete('iss');
      const accepted = await w.t
        .auth()
        .get(before.callback.pathname + before.callback.search)
        .set('Cookie', `__Host-svc_flow_${before.c.browserFlowId}=${before.c.flowCookie()}`)
        .expect(302);
      expect(accepted.headers.location).toMatch(/proof_id=prf_/);

      const rediscovered = await admin(w.t.env, 'provider', 'rediscover', '--tenant', 'acme', '--id', 'legacy-iss');
      expect(rediscovered).toMatchObject({
        status: 0,
        out: {
          provider: { id: 'legacy-iss', issuer: p.plain.issuer, authorization_response_iss_parameter_supported: true },
          changed: ['authorization_response_iss_parameter_supported'],
        },
      });
      const audit = await w.t.pg.query(
        `SELECT data FROM audit_events WHERE type = 'admin.provider.rediscover' AND subject = 'legacy-iss'`,
      );
      expect(audit.rows).toEqual([
        { data: { issuer: p.plain.issuer, changed: 'authorization_response_iss_parameter_supported' } },
      ]);
      const after = await answerFromIssuer('legacy-iss', 'legacy-iss-2');
      after.callback.searchParams.delete('iss');
      await expectRefusedCallback(after.c, after.callback, 'legacy-iss', 'legacy-iss-2');

      // Run again, nothing changes; an unknown provider is an error and writes nothing.
      expect(
        (await admin(w.t.env, 'provider', 'rediscover', '--tenant', 'acme', '--id', 'legacy-iss')).out,
      ).toMatchObject({
        changed: [],
      });
      expect((await admin(w.t.env, 'provider', 'rediscover', '--tenant', 'acme', '--id', 'nobody')).status).not.toBe(0);
      // A discovery document that cannot be read (or fails a check) changes nothing.
      const kept = await w.t.pg.query(`SELECT metadata FROM identity_providers WHERE id = 'legacy-iss'`);
      await w.t.pg.query(`UPDATE identity_providers SET issuer = 'http://127.0.0.1:9' WHERE id = 'legacy-iss'`);
      expect(
        (await admin(w.t.env, 'provider', 'rediscover', '--tenant', 'acme', '--id', 'legacy-iss')).status,
      ).not.toBe(0);
      expect((await w.t.pg.query(`SELECT metadata FROM identity_providers WHERE id = 'legacy-iss'`)).rows).toEqual(
        kept.rows,
      );
      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'legacy-iss')).status).toBe(0);
    });

    it('a state is consumed once under parallel callbacks', async () => {
      const { c, callback } = await answerFromIssuer('google', 'race-1');
      expect(callback.pathname).toBe('/t/acme/providers/callback');
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          w.t
            .auth()
            .get(callback.pathname + callback.search)
            .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`),
        ),
      );
      const proofs = answers.filter((a) => a.status === 302 && /proof_id=/.test(a.headers.location as string));
      expect(proofs).toHaveLength(1);
      expect(answers.filter((a) => a.status === 400)).toHaveLength(4);
    });

    it('a provider removed while a flow is under way ends the flow with error=server_error and no proof', async () => {
      expect((await p.addPlain('doomed')).status).toBe(0);
      const { c, callback } = await answerFromIssuer('doomed', 'doomed-1');
      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'doomed')).status).toBe(0);
      await expectRefusedCallback(c, callback, 'doomed', 'doomed-1');
    });

    it('a token endpoint that hangs or fails sends the player back with error=temporarily_unavailable, no proof', async () => {
      // Answers 500 on /broken, and never answers on /hang.
      const sockets = new Set<Socket>();
      const server = createServer((req, res) => {
        if (req.url?.startsWith('/broken')) res.writeHead(500, { 'content-type': 'text/plain' }).end('down');
      });
      server.on('connection', (socket: Socket) => sockets.add(socket));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const faulty = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        for (const [id, path] of [
          ['hanging', '/hang'],
          ['failing', '/broken'],
        ] as const) {
          await w.t.app.get(IdentityProvidersRepository).add(providerRow(id, { token_endpoint: `${faulty}${path}` }));
          await p.plain.setAccount({ sub: `${id}-1` });
          const c = w.client();
          await c.createGuest();
          const before = await proofKeys();
          expect([id, (await browserRound(c, id)).toString()]).toEqual([
            id,
            'https://play.acme.example/auth?error=temporarily_unavailable',
          ]);
          expect(await proofKeys()).toEqual(before);
        }
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('refuses an ID token from the token endpoint issued far in the future (contract 8), accepts an issuer 10 s ahead', async () => {
      // A token endpoint that answers with the ID token the test shapes, signed with the issuer's key.
      let idToken = '';
      const server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'at', token_type: 'Bearer', expires_in: 60, id_token: idToken }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const tokenEndpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
        await w.t.app.get(IdentityProvidersRepository).add(providerRow('shaped', { token_endpoint: tokenEndpoint }));
        /** The callback's redirect, and the proofs it left (the guest's own upgrade proof aside). */
        const round = async (sub: string, iat: number, nbf?: number): Promise<[string, string[]]> => {
          const c = w.client();
          await c.createGuest();
          const before = await proofKeys();
          const atIssuer = await startAtProvider(c, 'shaped');
          const nonce = atIssuer.searchParams.get('nonce');
          const claims = { iss: p.plain.issuer, aud: 'web-client', sub, nonce, iat, exp: iat + 300 };
          idToken = await p.plain.sign(nbf === undefined ? claims : { ...claims, nbf });
          const res = await w.t
            .auth()
            .get('/t/acme/providers/callback')
            .query({ code: 'c0de', state: atIssuer.searchParams.get('state') })
            .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
            .expect(302);
          return [res.headers.location as string, (await proofKeys()).filter((k) => !before.includes(k))];
        };
        expect(await round('future-1', now() + 600)).toEqual(['https://play.acme.example/auth?error=server_error', []]);
        expect(await identityRows('shaped', 'future-1')).toEqual([]);
        // The same answer issued now is accepted: the refusal above was the check at work.
        const [accepted] = await round('future-2', now());
        expect(GuestClient.providerRedirectResult(accepted).proof_id).toMatch(/^prf_/);
        // An issuer whose clock runs 10 s ahead (`iat` and `nbf`) is within the tolerance, as in the
        // native flow.
        const [ahead] = await round('future-3', now() + 10, now() + 10);
        expect(GuestClient.providerRedirectResult(ahead).proof_id).toMatch(/^prf_/);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('a credential another account owns: 409 identity_in_use at upgrade, then sign-in with the same proof', async () => {
      const owner = w.client();
      await owner.createGuest();
      await owner.createLinkingIntent();
      await p.plain.setAccount({ sub: 'owned-1', email: 'owned@example.com', email_verified: true });
      await owner.upgrade(
        GuestClient.providerRedirectResult((await browserRound(owner, 'google')).toString()).proof_id,
      );

      const c = w.client();
      await c.createGuest();
      await c.createLinkingIntent();
      const proof = GuestClient.providerRedirectResult((await browserRound(c, 'google')).toString()).proof_id;
      await expect(c.upgrade(proof)).rejects.toMatchObject({ status: 409, code: 'identity_in_use' });
      expect((await c.signIn(proof)).user_id).toBe(owner.userId);
    });
  });

  /**
   * Contract 14, `provider remove` ("flows under way end"): a flow is under way until its proof is
   * spent by `guest/upgrade`, `sign-in` or `me/identities`. A tenant removes a provider it no longer
   * trusts (its keys leaked, the issuer was taken over); a proof that provider made a moment
   * earlier must not still sign in or attach its credential afterwards.
   */
  describe('a provider removed while its proof is outstanding', () => {
    it('a proof issued before the removal no longer attaches its credential to the guest', async () => {
      expect((await p.addPlain('removed-later')).status).toBe(0);
      const nonce = randomBytes(12).toString('base64url');
      const idToken = await nativeIdToken(p.plain, { sub: 'removed-later-1' }, nonce);

      const c = w.client();
      await c.createGuest();
      await c.createLinkingIntent();
      const proof = await c.providerToken('removed-later', idToken, nonce);
      expect(proof.proof_id).toMatch(/^prf_/);

      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'removed-later')).status).toBe(0);

      const upgraded = await c.upgrade(proof.proof_id).then(
        (r) => ({ accepted: true, linked: r.linked_identity.provider }),
        (err: { status?: number }) => ({ accepted: false, status: err.status }),
      );
      expect(upgraded).toMatchObject({ accepted: false });
    });

    it('nor signs in, and the provider added again makes proofs that work', async () => {
      expect((await p.addPlain('removed-again')).status).toBe(0);
      const proofOf = async (c: ReturnType<GuestWorld['client']>) => {
        const nonce = randomBytes(12).toString('base64url');
        return c.providerToken('removed-again', await nativeIdToken(p.plain, { sub: 'removed-again-1' }, nonce), nonce);
      };
      const c = w.client();
      const stale = await proofOf(c);
      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'removed-again')).status).toBe(0);
      await expect(c.signIn(stale.proof_id)).rejects.toMatchObject({ status: 400, code: 'invalid_proof' });
      expect((await p.addPlain('removed-again')).status).toBe(0);
      const fresh = await proofOf(c);
      expect((await c.signIn(fresh.proof_id)).user_id).toMatch(/^usr_/);
    });
  });
});
