import { randomBytes } from 'node:crypto';
import { IdentitiesRepository } from '../../../src/directory/identities.repository';
import { admin } from '../../support/admin-cli';
import { startTestApp, type TestApp } from '../../support/test-app';
import { auditRows, startConsoleTenant, type ConsoleTenant } from '../../support/console-tenant';

const T = '/management/tenants/acme';
const key = (): string => randomBytes(32).toString('base64url');

/**
 * Issue 26: the console finds a player by the keyed digest of an address. Rows written before the
 * digest existed are digested by `identity redigest`, and a PRIVACY_KEY rotation loses nobody.
 */
describe('players found by address digest: backfill and PRIVACY_KEY rotation (issue 26)', () => {
  let w: ConsoleTenant;
  const instances: TestApp[] = [];
  beforeAll(async () => {
    w = await startConsoleTenant();
  });
  afterAll(async () => {
    for (const i of instances) await i.close();
    await w.close();
  });

  /** The ids GET users?q= answers on an instance, with the developer's bearer. */
  const found = async (t: TestApp, q: string): Promise<string[]> =>
    (
      await t
        .auth()
        .get(`${T}/users`)
        .set('Authorization', `Bearer ${w.tokens.developer.access_token}`)
        .query({ q })
        .expect(200)
    ).body.users.map((u: { id: string }) => u.id);
  const identityCount = async (): Promise<number> =>
    (await w.t.pg.query('SELECT count(*)::int AS n FROM identities')).rows[0].n as number;
  /** A player and identity as the service wrote them before the column existed: no digest. */
  const legacyPlayer = async (provider: string, subject: string, email: string | null, verified: boolean) => {
    const id = `usr_legacy${randomBytes(8).toString('hex')}`;
    await w.t.pg.query(`INSERT INTO users (id, tenant_id, kind, status) VALUES ($1, 'acme', 'regular', 'active')`, [
      id,
    ]);
    await w.t.pg.query(
      `INSERT INTO identities (id, tenant_id, user_id, provider, provider_subject, email, email_verified, status, metadata)
       VALUES ($1, 'acme', $2, $3, $4, $5, $6, 'active', '{}')`,
      [`idn_legacy${randomBytes(8).toString('hex')}`, id, provider, subject, email, verified],
    );
    return id;
  };

  let emailUser: string;
  let googleUser: string;

  it('a row written before the migration is found once `identity redigest` has run, batch by batch; a second run writes nothing', async () => {
    emailUser = await legacyPlayer('email', 'before@example.com', 'before@example.com', true);
    googleUser = await legacyPlayer('google', 'g-before', 'Prior@Provider.example', true);
    const unverified = await legacyPlayer('chat_platform', 'c-before', 'unverified@provider.example', false);
    expect(await found(w.t, 'before@example.com')).toEqual([]);

    const env = { DATABASE_URL: w.t.env.DATABASE_URL!, PRIVACY_KEY: w.t.env.PRIVACY_KEY! };
    const total = await identityCount();
    const first = await admin(env, 'identity', 'redigest', '--batch', '2');
    expect({ status: first.status, out: first.out }).toEqual({ status: 0, out: { digested: 2, current: total - 2 } });
    expect(await found(w.t, ' Before@Example.com ')).toEqual([emailUser]);
    expect(await found(w.t, 'prior@provider.example')).toEqual([googleUser]);
    expect(await found(w.t, 'unverified@provider.example')).toEqual([]);
    const { rows } = await w.t.pg.query('SELECT email_digest FROM identities WHERE user_id = $1', [unverified]);
    expect(rows).toEqual([{ email_digest: null }]);

    expect((await admin(env, 'identity', 'redigest')).out).toEqual({ digested: 0, current: total });
    expect((await auditRows(w.t, 'control-plane', 'admin.identity.redigest')).map((r) => r.data)).toEqual([
      { digested: 2, current: total - 2 },
      { digested: 0, current: total },
    ]);
    for (const batch of ['0', '-1', 'ten', '100000']) {
      const refused = await admin(env, 'identity', 'redigest', '--batch', batch);
      expect(refused.status).not.toBe(0);
    }
  });

  it('after a PRIVACY_KEY rotation (new key first) players are still found; redigest moves them to the new key', async () => {
    const oldKey = w.t.env.PRIVACY_KEY!;
    const newKey = key();
    const rotated = await startTestApp({ RATE_LIMITS: 'off', PRIVACY_KEY: `${newKey},${oldKey}` }, { shareWith: w.t });
    instances.push(rotated);
    // Digests made under the old key are found during the overlap.
    expect(await found(rotated, 'before@example.com')).toEqual([emailUser]);
    expect(await found(rotated, 'Prior@Provider.example')).toEqual([googleUser]);
    // A player signing up during the overlap is digested under the new key.
    const { user } = await rotated.app.get(IdentitiesRepository).resolveOrCreate(
      {
        tenantId: 'acme',
        provider: 'email',
        providerSubject: 'during@example.com',
        email: 'during@example.com',
        emailVerified: true,
        metadata: {},
      },
      'regular',
    );
    expect(await found(rotated, 'during@example.com')).toEqual([user.id]);
    expect(await found(w.t, 'during@example.com')).toEqual([]);

    const env = { DATABASE_URL: w.t.env.DATABASE_URL!, PRIVACY_KEY: `${newKey},${oldKey}` };
    const total = await identityCount();
    const moved = await admin(env, 'identity', 'redigest');
    expect(moved.out).toEqual({ digested: 2, current: total - 2 });
    expect((await admin(env, 'identity', 'redigest')).out).toEqual({ digested: 0, current: total });

    // With the old key dropped, everyone is still found.
    const newOnly = await startTestApp({ RATE_LIMITS: 'off', PRIVACY_KEY: newKey }, { shareWith: w.t });
    instances.push(newOnly);
    expect(await found(newOnly, 'before@example.com')).toEqual([emailUser]);
    expect(await found(newOnly, 'prior@provider.example')).toEqual([googleUser]);
    expect(await found(newOnly, 'during@example.com')).toEqual([user.id]);
  });
});
