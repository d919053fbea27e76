import { randomBytes } from 'node:crypto';
import { ClientsRepository } from '../../../src/directory/clients.repository';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { signIn } from '../../support/management-flow';
import { consoleBasic } from '../../support/test-app';

/**
 * A session belongs to its realm and its client, and only they can end or renew it:
 * - `revoke-session` ends control-plane sessions of the calling console client only (spec 4.2,
 *   section 3 "Control-plane session"): a customer session id answers as unknown.
 * - A customer refresh token refreshes and revokes only at its own tenant and client (spec 1.5,
 *   contract section 6); a refusal leaves the session and its token as they were.
 * - Customer ID tokens never authorize management routes (spec section 5, contract section 5).
 *
 * No request carries an Origin header, so the tenant CORS check never decides one of them.
 */
describe('realm and client isolation (spec 1.5, 4.2 and section 5; contract sections 3, 5 and 6)', () => {
  /** A native client of acme allowed a refresh token (the world's `cli_native` is allowed none). */
  const NATIVE = 'cli_native_offline';
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    await w.t.app.get(ClientsRepository).insert({
      id: NATIVE,
      tenantId: 'acme',
      name: NATIVE,
      type: 'native',
      enabled: true,
      scopes: ['openid', 'offline_access'],
      redirectUris: ['https://play.acme.example/auth'],
      secretDigest: null,
    });
  });
  afterAll(async () => {
    await w.close();
  });

  interface GuestTokens {
    readonly access_token: string;
    readonly refresh_token: string;
    readonly id_token: string;
    readonly session_id: string;
  }
  const guest = async (tenantId: string, clientId: string): Promise<GuestTokens> => {
    const res = await w.t
      .auth()
      .post(`/t/${tenantId}/guest`)
      .send({ client_id: clientId, browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` })
      .expect(201);
    expect(res.body).toMatchObject({ refresh_token: expect.any(String), id_token: expect.any(String) });
    return res.body as GuestTokens;
  };
  const refresh = (tenantId: string, clientId: string, token: string) =>
    w.t
      .auth()
      .post(`/t/${tenantId}/token`)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId });
  const revoke = (tenantId: string, clientId: string, token: string) =>
    w.t.auth().post(`/t/${tenantId}/revoke`).type('form').send({ token, client_id: clientId });
  /** The `session.revoked` audit rows (contract 12) naming the session: every revocation writes one first. */
  const revokedRows = async (sessionId: string): Promise<number> =>
    (
      await w.t.pg.query(
        `SELECT count(*)::int AS n FROM audit_events WHERE type = 'session.revoked' AND data->>'session_id' = $1`,
        [sessionId],
      )
    ).rows[0].n;

  describe('POST /management-auth/revoke-session', () => {
    it('answers {revoked: false} for a customer session id and leaves that session live', async () => {
      const g = await guest('acme', 'cli_game');
      const res = await w.t
        .auth()
        .post('/management-auth/revoke-session')
        .set('Authorization', consoleBasic(w.t))
        .send({ session_id: g.session_id })
        .expect(200);
      expect(res.body).toEqual({ revoked: false });
      expect(await revokedRows(g.session_id)).toBe(0);
      const renewed = await refresh('acme', 'cli_game', g.refresh_token).expect(200);
      expect(renewed.body.session_id).toBe(g.session_id);
    });
  });

  describe('customer refresh tokens stay with their client and tenant', () => {
    it('refuses a refresh token at another client of the same tenant with 400 invalid_grant, and it still refreshes for its own', async () => {
      const g = await guest('acme', NATIVE);
      const res = await refresh('acme', 'cli_game', g.refresh_token).expect(400);
      expect(res.body.error).toBe('invalid_grant');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(await revokedRows(g.session_id)).toBe(0);
      // Neither revoked nor rotated: the very token presented is still the current one.
      const renewed = await refresh('acme', NATIVE, g.refresh_token).expect(200);
      expect(renewed.body.session_id).toBe(g.session_id);
    });

    it.each([
      ['refresh token', 'refresh_token'],
      ['access token', 'access_token'],
    ] as const)(
      'revoke by another client of the same tenant answers 200 {} and leaves the session live (%s)',
      async (_n, field) => {
        const g = await guest('acme', NATIVE);
        const res = await revoke('acme', 'cli_game', g[field]).expect(200);
        expect(res.body).toEqual({});
        expect(await revokedRows(g.session_id)).toBe(0);
        const renewed = await refresh('acme', NATIVE, g.refresh_token).expect(200);
        expect(renewed.body.session_id).toBe(g.session_id);
        // The control: its own client does revoke it.
        await revoke('acme', NATIVE, renewed.body.refresh_token as string).expect(200);
        expect((await refresh('acme', NATIVE, renewed.body.refresh_token as string).expect(400)).body.error).toBe(
          'invalid_grant',
        );
      },
    );

    it('revoke at another tenant answers 200 {} and leaves the session live', async () => {
      const g = await guest('beta', 'cli_beta');
      const res = await revoke('acme', 'cli_game', g.refresh_token).expect(200);
      expect(res.body).toEqual({});
      expect(await revokedRows(g.session_id)).toBe(0);
      const renewed = await refresh('beta', 'cli_beta', g.refresh_token).expect(200);
      expect(renewed.body.session_id).toBe(g.session_id);
    });
  });

  describe('customer ID tokens on management routes', () => {
    const paths = ['/management-auth/current', '/management/tenants'];

    it('accepts a management token on each route (the control for the case below)', async () => {
      const own = await signIn(w.t, 'isolation@studio.example');
      for (const path of paths)
        await w.t.auth().get(path).set('Authorization', `Bearer ${own.access_token}`).expect(200);
    });

    it.each(paths)('%s refuses a customer ID token with 401 and Bearer error="invalid_token"', async (path) => {
      const g = await guest('acme', 'cli_game');
      const res = await w.t.auth().get(path).set('Authorization', `Bearer ${g.id_token}`).expect(401);
      expect(res.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
      expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    });
  });
});
