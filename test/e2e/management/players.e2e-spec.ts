import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { IdentitiesRepository } from '../../../src/directory/identities.repository';
import { IdentityEmailDigest } from '../../../src/directory/identity-email-digest';
import { createClient, emailUserId } from '../../support/console-fixtures';
import { auditRows, auditTrail, startConsoleTenant, type ConsoleTenant } from '../../support/console-tenant';

const T = '/management/tenants/acme';
const flowId = (): string => `flw_${randomBytes(18).toString('base64url')}`;

interface Guest {
  readonly user_id: string;
  readonly session_id: string;
  readonly refresh_token: string;
}

/** Contract 15: the console finds, inspects and takes care of a tenant's players. */
describe('management API: players and their sessions (contract 15)', () => {
  let w: ConsoleTenant;
  const guest = async (tenantId = 'acme', clientId = 'cli_acme_web'): Promise<Guest> =>
    (await w.t.auth().post(`/t/${tenantId}/guest`).send({ client_id: clientId, browser_flow_id: flowId() }).expect(201))
      .body as Guest;
  const refresh = (g: Guest) =>
    w.t
      .auth()
      .post('/t/acme/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: g.refresh_token, client_id: 'cli_acme_web' });
  const emailPlayer = (address: string, tenantId = 'acme'): Promise<string> => emailUserId(w.t, tenantId, address);

  beforeAll(async () => {
    w = await startConsoleTenant();
    await createClient(w.t, 'acme', { id: 'cli_acme_web', name: 'Acme Web', scopes: ['openid', 'offline_access'] });
    await createClient(w.t, 'other-team', { id: 'cli_other', name: 'Other', scopes: ['openid', 'offline_access'] });
  });
  afterAll(async () => {
    await w.close();
  });

  describe('GET users?q=: an exact user id or an exact address, never a pattern', () => {
    let playerId: string;
    beforeAll(async () => {
      playerId = await emailPlayer('player@example.com');
      await emailPlayer('other@example.com', 'other-team');
    });

    it('finds a player by id, with exactly the contract fields', async () => {
      const res = await w.as('developer').get(`${T}/users`).query({ q: playerId }).expect(200);
      expect(res.body).toEqual({
        users: [
          {
            id: playerId,
            guest: false,
            status: 'active',
            created_at: expect.any(String),
            identities: [{ provider: 'email', provider_subject: 'player@example.com', email: 'player@example.com' }],
          },
        ],
      });
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('finds a player by the address in any case and spacing, normalised as sign-in does', async () => {
      for (const q of ['player@example.com', ' Player@Example.COM '])
        expect(
          (await w.as('developer').get(`${T}/users`).query({ q }).expect(200)).body.users.map(
            (u: { id: string }) => u.id,
          ),
        ).toEqual([playerId]);
    });

    it.each([
      ['a prefix', 'player@example'],
      ['a suffix', 'layer@example.com'],
      ['a LIKE pattern', '%@example.com'],
      ['a regex', 'player@.*'],
      ['the same address in another tenant', 'other@example.com'],
    ])('finds nobody for %s', async (_label, q) => {
      const res = await w.as('developer').get(`${T}/users`).query({ q }).expect(200);
      expect(res.body).toEqual({ users: [] });
    });

    it('looks an address up by its digest on the (tenant, email_digest) index: the address never reaches the database', async () => {
      const db = w.t.app.get(DataSource);
      const spy = jest.spyOn(db, 'query');
      try {
        await w.as('developer').get(`${T}/users`).query({ q: ' Player@Example.COM ' }).expect(200);
        const issued = spy.mock.calls.map(([sql, params]) => [String(sql).replace(/\s+/g, ' ').trim(), params]);
        const digests = w.t.app.get(IdentityEmailDigest).candidates('player@example.com');
        // The one statement given the digests: an exact match on them, in this tenant.
        expect(issued.filter(([, params]) => JSON.stringify(params).includes(digests[0]!))).toEqual([
          [
            'SELECT DISTINCT user_id FROM identities WHERE tenant_id = $1 AND email_digest = ANY($2::text[]) ORDER BY user_id',
            ['acme', digests],
          ],
        ]);
        // No statement is given the address, none matches a pattern, and none compares a plain
        // address column with anything (the found player's identities are read by user id).
        for (const [sql, params] of issued) {
          expect(JSON.stringify(params).toLowerCase()).not.toContain('player@example.com');
          expect(sql).not.toMatch(/\b(I?LIKE|SIMILAR TO|lower\()|~/i);
          expect(sql).not.toMatch(/\b(provider_subject|email)\s*(=|<>|!=|\bIN\b)/i);
        }
        const plan = await w.t.pg.query(
          `SET enable_seqscan = off; EXPLAIN SELECT DISTINCT user_id FROM identities WHERE tenant_id = 'acme' AND email_digest = ANY(ARRAY['a', 'b']) ORDER BY user_id`,
        );
        const rows = (Array.isArray(plan) ? plan.at(-1) : plan) as { rows: Array<{ 'QUERY PLAN': string }> };
        expect(rows.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/identities_email_digest/);
      } finally {
        spy.mockRestore();
        await w.t.pg.query('RESET enable_seqscan');
      }
    });

    it('finds a provider identity by its verified email, never by an unverified one', async () => {
      const identities = w.t.app.get(IdentitiesRepository);
      const claim = { tenantId: 'acme', metadata: {} };
      const verified = await identities.resolveOrCreate(
        { ...claim, provider: 'google', providerSubject: 'g-1001', email: 'Gamer@Mail.example', emailVerified: true },
        'regular',
      );
      await identities.resolveOrCreate(
        {
          ...claim,
          provider: 'chat_platform',
          providerSubject: 'c-2002',
          email: 'unproven@mail.example',
          emailVerified: false,
        },
        'regular',
      );
      const found = await w.as('developer').get(`${T}/users`).query({ q: 'gamer@mail.example' }).expect(200);
      expect(found.body.users.map((u: { id: string }) => u.id)).toEqual([verified.user.id]);
      expect(found.body.users[0].identities).toEqual([{ provider: 'google', provider_subject: 'g-1001' }]);
      expect(
        (await w.as('developer').get(`${T}/users`).query({ q: 'unproven@mail.example' }).expect(200)).body,
      ).toEqual({ users: [] });
    });

    it('finds every player of the tenant that proved the address: an email identity and a provider one', async () => {
      const emailOwner = await emailPlayer('shared@mail.example');
      const { user } = await w.t.app.get(IdentitiesRepository).resolveOrCreate(
        {
          tenantId: 'acme',
          provider: 'chat_platform',
          providerSubject: 'c-3003',
          email: 'Shared@Mail.example',
          emailVerified: true,
          metadata: {},
        },
        'regular',
      );
      const res = await w.as('developer').get(`${T}/users`).query({ q: 'shared@mail.example' }).expect(200);
      expect(res.body.users.map((u: { id: string }) => u.id)).toEqual([emailOwner, user.id].sort());
    });

    it('finds nobody for a player id of another tenant', async () => {
      const stranger = await guest('other-team', 'cli_other');
      const res = await w.as('developer').get(`${T}/users`).query({ q: stranger.user_id }).expect(200);
      expect(res.body).toEqual({ users: [] });
    });

    it.each([
      ['no q', {}],
      ['a q that is neither id nor address', { q: 'player' }],
      ['an unknown parameter', { q: 'player@example.com', like: '1' }],
    ])('refuses %s with 400', async (_label, query) => {
      const res = await w.as('developer').get(`${T}/users`).query(query).expect(400);
      expect(res.body.error).toBe('invalid_request');
    });
  });

  it('GET users/{userId}: the player and its live sessions, with last use after a refresh', async () => {
    const g = await guest();
    const first = await w.as('developer').get(`${T}/users/${g.user_id}`).expect(200);
    expect(first.body).toEqual({
      user: { id: g.user_id, guest: true, status: 'active', created_at: expect.any(String), identities: [] },
      sessions: [{ id: g.session_id, client_id: 'cli_acme_web', created_at: expect.any(String), last_used_at: null }],
    });
    await refresh(g).expect(200);
    const after = await w.as('developer').get(`${T}/users/${g.user_id}`).expect(200);
    expect(after.body.sessions[0].last_used_at).toEqual(expect.any(String));
    await w
      .as('developer')
      .get(`${T}/users/usr_${'x'.repeat(22)}`)
      .expect(404);
  });

  it('POST sessions/{sessionId}/revoke ends that session: its refresh is refused, its rows name the actor', async () => {
    const g = await guest();
    const other = await guest();
    const res = await w.as('admin').post(`${T}/sessions/${g.session_id}/revoke`).expect(200);
    expect(res.body).toEqual({ revoked: true });
    expect((await refresh(g).expect(400)).body.error).toBe('invalid_grant');
    await refresh(other).expect(200);
    expect((await w.as('developer').get(`${T}/users/${g.user_id}`).expect(200)).body.sessions).toEqual([]);
    expect((await auditRows(w.t, 'acme', 'console.session.revoke')).at(-1)).toEqual({
      subject: g.session_id,
      data: { actor_id: w.userIds.admin, user_id: g.user_id },
    });
    expect((await auditRows(w.t, 'acme', 'session.revoked')).at(-1)).toEqual({
      subject: g.user_id,
      data: { session_id: g.session_id, by: 'console' },
    });
  });

  it('contract 15 (exact JSON bodies, unknown fields 400): the body-less player writes refuse a body with fields, and change nothing', async () => {
    const g = await guest();
    const revoke = await w.as('admin').post(`${T}/sessions/${g.session_id}/revoke`, { all_sessions: true });
    const deactivate = await w.as('admin').post(`${T}/users/${g.user_id}/deactivate`, { reason: 'abuse' });
    expect([revoke.status, revoke.body.error]).toEqual([400, 'invalid_request']);
    expect([deactivate.status, deactivate.body.error]).toEqual([400, 'invalid_request']);
    await refresh(g).expect(200);
  });

  it('refuses to revoke a session of another tenant (404), which stays live', async () => {
    const stranger = await guest('other-team', 'cli_other');
    await w.as('owner').post(`${T}/sessions/${stranger.session_id}/revoke`).expect(404);
    await w.as('owner').post(`${T}/sessions/ses_nope/revoke`).expect(404);
    await w.t
      .auth()
      .post('/t/other-team/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: stranger.refresh_token, client_id: 'cli_other' })
      .expect(200);
  });

  it('POST users/{userId}/deactivate: the player is deactivated, every session ends at once, both rows recorded', async () => {
    const g = await guest();
    const res = await w.as('admin').post(`${T}/users/${g.user_id}/deactivate`).expect(200);
    expect(res.body.user).toEqual(expect.objectContaining({ id: g.user_id, status: 'deactivated' }));
    expect((await refresh(g).expect(400)).body.error).toBe('invalid_grant');
    expect((await auditRows(w.t, 'acme', 'user.deactivated')).at(-1)).toEqual({
      subject: g.user_id,
      data: { by: 'console' },
    });
    expect((await auditRows(w.t, 'acme', 'console.user.deactivate')).at(-1)).toEqual({
      subject: g.user_id,
      data: { actor_id: w.userIds.admin },
    });
  });

  it('DELETE users/{userId} erases the player as the CLI does: no row keeps the address or its digest, the audit API shows neither, the id finds nobody', async () => {
    const address = 'leaving@example.com';
    const id = await emailPlayer(address);
    const { user: other } = await w.t.app.get(IdentitiesRepository).resolveOrCreate(
      {
        tenantId: 'acme',
        provider: 'google',
        providerSubject: 'g-leaving',
        email: 'Leaving@Example.com',
        emailVerified: true,
        metadata: {},
      },
      'regular',
    );
    const digests = w.t.app.get(IdentityEmailDigest).candidates(address);
    // Rows that once held the address (as an identity event might), in the case a provider gave it:
    // erasure must redact them.
    for (const email of [address, 'Leaving@Example.com'])
      await w.t.pg.query(
        `INSERT INTO audit_events (type, tenant_id, subject, data) VALUES ('identity.linked', 'acme', $1, $2)`,
        [id, JSON.stringify({ email })],
      );
    expect((await w.as('owner').delete(`${T}/users/${id}`).expect(200)).body).toEqual({ deleted: true });
    const { rows } = await w.t.pg.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE data::text ILIKE '%leaving@%'`,
    );
    expect(rows).toEqual([{ n: 0 }]);
    const { events: trail } = await auditTrail(w);
    expect(trail.length).toBeGreaterThan(2);
    expect(JSON.stringify(trail).toLowerCase()).not.toContain('leaving@');
    // The erased player's identity and digest are gone; the other player's stays until erased too.
    const left = await w.t.pg.query(
      `SELECT user_id, email_digest FROM identities WHERE email_digest = ANY($1) OR provider_subject = $2`,
      [digests, address],
    );
    expect(left.rows).toEqual([{ user_id: other.id, email_digest: digests[0] }]);
    expect(
      (await w.as('developer').get(`${T}/users`).query({ q: address }).expect(200)).body.users.map(
        (u: { id: string }) => u.id,
      ),
    ).toEqual([other.id]);
    await w.as('owner').delete(`${T}/users/${other.id}`).expect(200);
    expect(
      (await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE email_digest = ANY($1)`, [digests])).rows,
    ).toEqual([{ n: 0 }]);
    expect((await w.as('developer').get(`${T}/users`).query({ q: address }).expect(200)).body).toEqual({ users: [] });
    await w.as('developer').get(`${T}/users/${id}`).expect(404);
    await w.as('owner').delete(`${T}/users/${id}`).expect(404);
    expect((await auditRows(w.t, 'acme', 'console.user.delete')).at(-2)).toEqual({
      subject: id,
      data: { actor_id: w.userIds.owner, revoked_sessions: 0 },
    });
    expect((await auditRows(w.t, 'acme', 'user.deleted')).at(-2)).toEqual({ subject: id, data: { by: 'console' } });
  });

  it('DELETE users/{userId} of a player whose provider subject is short redacts only rows naming it: other rows keep their actor', async () => {
    // An erasure whose row counts one revoked session, by the admin.
    const first = await guest();
    await w.as('admin').delete(`${T}/users/${first.user_id}`).expect(200);
    // A player of an OpenID Connect issuer with numeric subjects (contract 14: any issuer).
    const { user: numbered } = await w.t.app.get(IdentitiesRepository).resolveOrCreate(
      {
        tenantId: 'acme',
        provider: 'studio-accounts',
        providerSubject: '1',
        email: null,
        emailVerified: false,
        metadata: {},
      },
      'regular',
    );
    await w.t.pg.query(
      `INSERT INTO audit_events (type, tenant_id, subject, data) VALUES ('identity.linked', 'acme', $1, $2)`,
      [numbered.id, JSON.stringify({ provider: 'studio-accounts', provider_subject: '1' })],
    );
    await w.as('owner').delete(`${T}/users/${numbered.id}`).expect(200);
    const rowOf = async (type: string, subject: string) =>
      (await auditRows(w.t, 'acme', type)).filter((r) => r.subject === subject);
    expect(await rowOf('console.user.delete', first.user_id)).toEqual([
      { subject: first.user_id, data: { actor_id: w.userIds.admin, revoked_sessions: 1 } },
    ]);
    expect(await rowOf('identity.linked', numbered.id)).toEqual([{ subject: numbered.id, data: { redacted: true } }]);
  });

  it('DELETE users/{userId} of an email player redacts rows naming the address, not rows naming a longer one', async () => {
    const erased = await emailPlayer('a@b.co');
    const neighbour = await emailPlayer('xa@b.com');
    const row = (subject: string, data: object) =>
      w.t.pg.query(
        `INSERT INTO audit_events (type, tenant_id, subject, data) VALUES ('identity.linked', 'acme', $1, $2)`,
        [subject, JSON.stringify(data)],
      );
    // The erased address as a whole value, in another case, and inside a list.
    await row(erased, { email: 'A@B.co' });
    await row(erased, { emails: ['x', 'a@b.co'] });
    // Addresses that merely contain it, of other players.
    for (const email of ['xa@b.com', 'a@b.co.uk', 'ba@b.co']) await row(neighbour, { email });
    await w.as('owner').delete(`${T}/users/${erased}`).expect(200);
    const rowsOf = async (subject: string) =>
      (await auditRows(w.t, 'acme', 'identity.linked')).filter((r) => r.subject === subject);
    expect(await rowsOf(erased)).toEqual([
      { subject: erased, data: { redacted: true } },
      { subject: erased, data: { redacted: true } },
    ]);
    expect(await rowsOf(neighbour)).toEqual([
      { subject: neighbour, data: { email: 'xa@b.com' } },
      { subject: neighbour, data: { email: 'a@b.co.uk' } },
      { subject: neighbour, data: { email: 'ba@b.co' } },
    ]);
  });
});
