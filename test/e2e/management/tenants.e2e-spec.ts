import { importJWK, SignJWT, type JWK, type CryptoKey } from 'jose';
import { addMember, controlPlaneUserId, createClient, createTenant } from '../../support/console-fixtures';
import { signIn, type ManagementTokens } from '../../support/management-flow';
import { startTestApp, type TestApp } from '../../support/test-app';
import { readTestSecrets } from '../../support/test-secrets';
import { TenantsRepository } from '../../../src/directory/tenants.repository';
import { MembershipsRepository } from '../../../src/directory/memberships.repository';

describe('management API: tenants and clients (spec 4.2, contract section 5)', () => {
  let t: TestApp;
  let dev: ManagementTokens;
  let outsider: ManagementTokens;
  const bearer = (tokens: ManagementTokens | string) =>
    `Bearer ${typeof tokens === 'string' ? tokens : tokens.access_token}`;
  const get = (path: string, tokens: ManagementTokens | string) =>
    t.auth().get(path).set('Authorization', bearer(tokens));

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    await createTenant(t, 'zeta-games', 'Zeta Games');
    await createTenant(t, 'alpha-studio', 'Alpha Studio');
    await createTenant(t, 'closed-co', 'Closed Co');
    await createTenant(t, 'other-team', 'Other Team');
    await addMember(t, 'zeta-games', 'dev@studio.example', 'viewer');
    await addMember(t, 'alpha-studio', 'dev@studio.example', 'owner');
    await addMember(t, 'closed-co', 'dev@studio.example', 'admin');
    await addMember(t, 'other-team', 'outsider@studio.example', 'owner');
    await t.app.get(TenantsRepository).setStatus('closed-co', 'inactive');
    await createClient(t, 'alpha-studio', {
      id: 'cli_alpha_web',
      name: 'Alpha Web',
      type: 'browser',
      scopes: ['openid', 'offline_access'],
      webOrigins: ['https://play.alpha.example'],
    });
    await createClient(t, 'alpha-studio', {
      id: 'cli_alpha_android',
      name: 'Alpha Android',
      type: 'native',
      enabled: false,
      scopes: ['openid'],
    });
    await createClient(t, 'other-team', { id: 'cli_other', name: 'Other' });
    dev = await signIn(t, 'dev@studio.example');
    outsider = await signIn(t, 'outsider@studio.example');
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists only active customer tenants with a current membership, by name, with the role', async () => {
    const res = await get('/management/tenants', dev).expect(200);
    expect(res.body).toEqual({
      tenants: [
        { id: 'alpha-studio', name: 'Alpha Studio', role: 'owner' },
        { id: 'zeta-games', name: 'Zeta Games', role: 'viewer' },
      ],
    });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('gives an empty list to a developer without memberships', async () => {
    const lonely = await signIn(t, 'lonely@studio.example');
    const res = await get('/management/tenants', lonely).expect(200);
    expect(res.body).toEqual({ tenants: [] });
  });

  it('shows one tenant to a member, with exactly the contract fields', async () => {
    const res = await get('/management/tenants/alpha-studio', dev).expect(200);
    expect(res.body).toEqual({
      tenant: { id: 'alpha-studio', name: 'Alpha Studio', status: 'active', created_at: expect.any(String) },
    });
    expect(new Date(res.body.tenant.created_at).toISOString()).toBe(res.body.tenant.created_at);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it("lists a tenant's clients with exactly the contract fields and web origins: no secret digest, no redirect URIs", async () => {
    const res = await get('/management/tenants/alpha-studio/clients', dev).expect(200);
    expect(res.body).toEqual({
      clients: [
        {
          client_id: 'cli_alpha_web',
          name: 'Alpha Web',
          type: 'browser',
          enabled: true,
          scopes: ['openid', 'offline_access'],
          // Contract section 11: the redirect URI's origin, then the registered ones.
          web_origins: ['https://game.example', 'https://play.alpha.example'],
        },
        {
          client_id: 'cli_alpha_android',
          name: 'Alpha Android',
          type: 'native',
          enabled: false,
          scopes: ['openid'],
          web_origins: [],
        },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    });
    expect(res.text).not.toMatch(/secret|redirect|callback/i);
  });

  describe('tenant membership rule: 403 forbidden, existence never revealed', () => {
    const paths = (id: string) => [`/management/tenants/${id}`, `/management/tenants/${id}/clients`];
    const cases: Array<[string, string]> = [
      ['a tenant the caller is not a member of', 'other-team'],
      ['a tenant that does not exist', 'no-such-tenant'],
      ['an inactive tenant the caller is a member of', 'closed-co'],
      ['the control-plane realm', 'control-plane'],
      ['an id no tenant can have', 'UPPER_case'],
    ];
    it.each(cases)('refuses %s with the same answer', async (_label, id) => {
      for (const path of paths(id)) {
        const res = await get(path, dev).expect(403);
        expect(res.body).toEqual({ error: 'forbidden', error_description: 'No access to this tenant.' });
      }
    });

    it('admits the member of that other tenant (the control for the first case)', async () => {
      const res = await get('/management/tenants/other-team/clients', outsider).expect(200);
      expect(res.body.clients.map((c: { client_id: string }) => c.client_id)).toEqual(['cli_other']);
    });

    it('takes a removed membership into account at once, with the same token', async () => {
      const lead = await signIn(t, 'lead@studio.example');
      await addMember(t, 'zeta-games', 'lead@studio.example', 'admin');
      await get('/management/tenants/zeta-games', lead).expect(200);
      await t.app.get(MembershipsRepository).remove('zeta-games', await controlPlaneUserId(t, 'lead@studio.example'));
      await get('/management/tenants/zeta-games', lead).expect(403);
      expect((await get('/management/tenants', lead).expect(200)).body).toEqual({ tenants: [] });
    });
  });

  describe('only management tokens of the control-plane realm pass (spec section 5)', () => {
    let esKey: CryptoKey;
    let rsKey: CryptoKey;
    const now = () => Math.floor(Date.now() / 1000);

    beforeAll(async () => {
      const keys = (JSON.parse(readTestSecrets().SIGNING_KEYS) as { keys: JWK[] }).keys;
      esKey = (await importJWK(keys.find((k) => k.alg === 'ES256') as JWK, 'ES256')) as CryptoKey;
      rsKey = (await importJWK(keys.find((k) => k.alg === 'RS256') as JWK, 'RS256')) as CryptoKey;
    });

    async function expectRefused(authorization: string | undefined): Promise<void> {
      for (const path of [
        '/management/tenants',
        '/management/tenants/alpha-studio',
        '/management/tenants/alpha-studio/clients',
      ]) {
        const req = t.auth().get(path);
        const res = await (authorization === undefined ? req : req.set('Authorization', authorization)).expect(401);
        expect(res.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
        expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      }
    }

    it('refuses a request without a token', async () => {
      await expectRefused(undefined);
    });

    it('refuses a guest (customer) access token of a tenant the user belongs to', async () => {
      const sub = await controlPlaneUserId(t, 'dev@studio.example');
      const guest = await new SignJWT({
        sub,
        aud: 'cli_alpha_web',
        client_id: 'cli_alpha_web',
        sid: dev.session_id,
        scope: 'openid',
        token_use: 'access',
        jti: 'g1',
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'test-es-1' })
        .setIssuer(`${t.authOrigin}/t/alpha-studio`)
        .setIssuedAt(now())
        .setExpirationTime(now() + 300)
        .sign(esKey);
      await expectRefused(bearer(guest));
    });

    it('refuses a management-looking token whose audience is an array, and one with the customer token_use', async () => {
      const base = {
        sub: await controlPlaneUserId(t, 'dev@studio.example'),
        client_id: 'cli_console',
        sid: dev.session_id,
        scope: 'tenant:read',
        jti: 'm1',
      };
      const sign = (claims: Record<string, unknown>) =>
        new SignJWT({ ...base, ...claims })
          .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: 'test-rs-1' })
          .setIssuer(`${t.authOrigin}/t/control-plane`)
          .setIssuedAt(now())
          .setExpirationTime(now() + 300)
          .sign(rsKey);
      // The control: the same construction with the right claims passes.
      await get('/management/tenants', await sign({ aud: 'urn:svc:management', token_use: 'management' })).expect(200);
      await expectRefused(bearer(await sign({ aud: ['urn:svc:management'], token_use: 'management' })));
      await expectRefused(bearer(await sign({ aud: 'urn:svc:management', token_use: 'access' })));
    });

    it('refuses the token of a revoked control-plane session', async () => {
      const tokens = await signIn(t, 'revoked@studio.example');
      await get('/management/tenants', tokens).expect(200);
      await t.auth().post('/management-auth/revoke').set('Authorization', bearer(tokens)).expect(200);
      await expectRefused(bearer(tokens));
    });
  });

  describe('no operations beyond contract 15, and host routing', () => {
    it.each(['post', 'put', 'patch', 'delete'] as const)(
      'has no %s operation on tenants or the client list (contract 15 adds only POST there)',
      async (method) => {
        for (const path of [
          '/management/tenants',
          '/management/tenants/alpha-studio',
          ...(method === 'post' ? [] : ['/management/tenants/alpha-studio/clients']),
        ]) {
          const res = await t.auth()[method](path).set('Authorization', bearer(dev)).send({ name: 'x' }).expect(404);
          expect(res.body.error).toBe('not_found');
        }
        expect((await get('/management/tenants', dev).expect(200)).body.tenants).toHaveLength(2);
      },
    );

    it('is not served on the console host', async () => {
      const res = await t.console().get('/management/tenants').set('Authorization', bearer(dev)).expect(404);
      expect(res.body).toEqual({ error: 'not_found', error_description: 'No such resource.' });
    });
  });
});
