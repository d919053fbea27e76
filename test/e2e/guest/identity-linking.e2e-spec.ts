import { whileIdentityWriteRefused } from '../../support/postgres-outage';
import { admin } from '../../support/admin-cli';
import { randomBytes } from 'node:crypto';
import { GuestClient } from '../../../sdk/src/guest-client';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { browserWithFlow, NATIVE_APP_ID, startProviders, type ProviderWorld } from '../../support/provider-fixtures';

// @redis-cluster flow-records.store:RESTORE_INTENT_AND_PROOF

describe('linking and unlinking credentials of a full account (contract 14)', () => {
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

  const now = () => Math.floor(Date.now() / 1000);
  const googleToken = (sub: string, email?: string) =>
    p.plain.sign({
      iss: p.plain.issuer,
      aud: NATIVE_APP_ID,
      sub,
      // Each token its own: an ID token proves a sign-in once.
      jti: randomBytes(8).toString('hex'),
      iat: now(),
      exp: now() + 300,
      ...(email ? { email, email_verified: true } : {}),
    });
  const audit = async (type: string, subject: string) =>
    (await w.t.pg.query(`SELECT data FROM audit_events WHERE type = $1 AND subject = $2`, [type, subject])).rows;

  /** A guest upgraded with an email: a full account with one identity. */
  async function fullAccount(tenant?: {
    tenantId: string;
    clientId: string;
  }): Promise<{ c: GuestClient; email: string }> {
    const c = w.client(tenant);
    await c.createGuest();
    await c.createLinkingIntent();
    const email = `player-${randomBytes(4).toString('hex')}@example.com`;
    await c.upgrade(await emailProof(w, c, email));
    return { c, email };
  }

  it('links a second and a third provider to an upgraded player (native and browser flows); the session stays; identity.linked is recorded', async () => {
    const { c, email } = await fullAccount();
    const sessionBefore = c.sessionId;
    await c.createAccountLinkingIntent();
    const proof = await c.providerToken('google', await googleToken('link-g-1', 'Linked@Example.com'));
    const linked = await c.linkIdentity(proof.proof_id);
    expect(linked).toEqual({
      user_id: c.userId,
      linked_identity: { provider: 'google', provider_subject: 'link-g-1', email: 'linked@example.com' },
    });

    // The browser flow, Apple-like issuer (form_post, client-secret JWT).
    await c.createAccountLinkingIntent();
    await p.apple.setAccount({ sub: 'link-a-1', email: 'relay1@privaterelay.appleid.com', email_verified: true });
    const back = await browserWithFlow(c.browserFlowId, c.flowCookie()).navigate(c.providerStartUrl('apple'));
    await c.linkIdentity(GuestClient.providerRedirectResult(back).proof_id);

    expect(c.sessionId).toBe(sessionBefore);
    const me = await c.me();
    expect(me.guest).toBe(false);
    expect(me.identities.map((i) => [i.provider, i.provider_subject]).sort()).toEqual([
      ['apple', 'link-a-1'],
      ['email', email],
      ['google', 'link-g-1'],
    ]);
    const rows = await audit('identity.linked', c.userId as string);
    expect(rows.map((r) => r.data.provider).sort()).toEqual(['apple', 'google']);
    expect(rows[0].data).toMatchObject({ client_id: 'cli_game', session_id: sessionBefore });
  });

  it('refuses a guest at me/linking-intent, and a proof without the flow’s intent (invalid_proof)', async () => {
    const guest = w.client();
    await guest.createGuest();
    await expect(guest.createAccountLinkingIntent()).rejects.toMatchObject({ status: 400, code: 'invalid_proof' });

    const { c } = await fullAccount();
    const proof = await c.providerToken('google', await googleToken('no-intent-1'));
    await expect(c.linkIdentity(proof.proof_id)).rejects.toMatchObject({ status: 400, code: 'invalid_proof' });
    const owner = await w.t.pg.query(
      `SELECT u.kind FROM identities i JOIN users u ON u.id = i.user_id WHERE provider = 'google' AND provider_subject = 'no-intent-1'`,
    );
    expect(owner.rows).toEqual([{ kind: 'provisional' }]);
  });

  it('a proof sent to the other kind of account’s route is refused and spends nothing: the right route then takes it', async () => {
    // A full account at the guest's upgrade.
    const { c } = await fullAccount();
    await c.createAccountLinkingIntent();
    const proof = await c.providerToken('google', await googleToken('wrong-route-1'));
    await expect(c.upgrade(proof.proof_id)).rejects.toMatchObject({ status: 400, code: 'invalid_proof' });
    expect((await c.linkIdentity(proof.proof_id)).linked_identity.provider_subject).toBe('wrong-route-1');

    // A guest at a full account's link.
    const guest = w.client();
    await guest.createGuest();
    await guest.createLinkingIntent();
    const guestProof = await guest.providerToken('google', await googleToken('wrong-route-2'));
    await expect(guest.linkIdentity(guestProof.proof_id)).rejects.toMatchObject({ status: 400, code: 'invalid_proof' });
    expect((await guest.upgrade(guestProof.proof_id)).user_id).toBe(guest.userId);
  });

  it('a credential another account owns: 409 identity_in_use, nothing moves, and the proof still signs in to its owner', async () => {
    const first = await fullAccount();
    await first.c.createAccountLinkingIntent();
    await first.c.linkIdentity((await first.c.providerToken('google', await googleToken('owned-g-1'))).proof_id);

    const { c } = await fullAccount();
    await c.createAccountLinkingIntent();
    const proof = await c.providerToken('google', await googleToken('owned-g-1'));
    await expect(c.linkIdentity(proof.proof_id)).rejects.toMatchObject({ status: 409, code: 'identity_in_use' });
    const rows = await w.t.pg.query(
      `SELECT user_id FROM identities WHERE provider = 'google' AND provider_subject = 'owned-g-1'`,
    );
    expect(rows.rows).toEqual([{ user_id: first.c.userId }]);
    expect(await audit('identity.linked', c.userId as string)).toEqual([]);
    expect((await c.signIn(proof.proof_id)).user_id).toBe(first.c.userId);
  });

  it('a link refused with 503 inside its transaction spends neither intent nor proof: the retry links (contract 13)', async () => {
    const { c } = await fullAccount();
    await c.createAccountLinkingIntent();
    const proof = await c.providerToken('google', await googleToken('flaky-link-1'));
    // PostgreSQL refuses the move (a serialization failure) after the intent and proof were taken.
    await whileIdentityWriteRefused(w.t.pg, 'UPDATE', 'flaky-link-1', async () => {
      await expect(c.linkIdentity(proof.proof_id)).rejects.toMatchObject({
        status: 503,
        code: 'temporarily_unavailable',
      });
    });
    expect(await audit('identity.linked', c.userId as string)).toEqual([]);
    expect(await c.linkIdentity(proof.proof_id)).toEqual({
      user_id: c.userId,
      linked_identity: { provider: 'google', provider_subject: 'flaky-link-1', email: null },
    });
    expect(await audit('identity.linked', c.userId as string)).toHaveLength(1);
  });

  it('unlinks a credential (identity.unlinked), never the last one (409 last_identity); an unknown one is 404', async () => {
    const { c, email } = await fullAccount();
    await c.createAccountLinkingIntent();
    await c.linkIdentity((await c.providerToken('google', await googleToken('unlink-g-1'))).proof_id);

    await expect(c.unlinkIdentity('google', 'nobody')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect(await c.unlinkIdentity('google', 'unlink-g-1')).toEqual({ unlinked: true });
    expect((await c.me()).identities).toEqual([{ provider: 'email', provider_subject: email, email }]);
    expect(await audit('identity.unlinked', c.userId as string)).toEqual([
      { data: { provider: 'google', client_id: 'cli_game', session_id: c.sessionId } },
    ]);
    await expect(c.unlinkIdentity('email', email)).rejects.toMatchObject({ status: 409, code: 'last_identity' });
    expect((await c.me()).identities).toHaveLength(1);
    // The freed credential can be linked again, by anyone.
    await c.createAccountLinkingIntent();
    await c.linkIdentity((await c.providerToken('google', await googleToken('unlink-g-1'))).proof_id);
  });

  it('a proof issued before its credential was unlinked no longer signs in to the account', async () => {
    const { c } = await fullAccount();
    await c.createAccountLinkingIntent();
    await c.linkIdentity((await c.providerToken('google', await googleToken('unlinked-later-1'))).proof_id);
    // Whoever proved the credential in another browser, while the account still held it.
    const other = w.client();
    const proof = await other.providerToken('google', await googleToken('unlinked-later-1'));
    await c.unlinkIdentity('google', 'unlinked-later-1');
    await expect(other.signIn(proof.proof_id)).rejects.toMatchObject({ status: 400, code: 'invalid_proof' });
    const sessions = await w.t.pg.query(`SELECT count(*)::int AS n FROM sessions WHERE user_id = $1`, [c.userId]);
    expect(sessions.rows).toEqual([{ n: 2 }]);
  });

  it('unlinks a credential whose subject holds URL delimiters (an issuer may use a URL as its sub)', async () => {
    const { c, email } = await fullAccount();
    const subject = `https://idp.example/users/42?tab=a#b%2F${randomBytes(3).toString('hex')}`;
    await c.createAccountLinkingIntent();
    await c.linkIdentity((await c.providerToken('google', await googleToken(subject))).proof_id);
    expect((await c.me()).identities).toContainEqual({ provider: 'google', provider_subject: subject });
    // The same path with the subject's last segment alone names no credential of this account.
    await expect(c.unlinkIdentity('google', subject.split('/').at(-1) as string)).rejects.toMatchObject({
      status: 404,
    });
    expect(await c.unlinkIdentity('google', subject)).toEqual({ unlinked: true });
    expect((await c.me()).identities).toEqual([{ provider: 'email', provider_subject: email, email }]);
  });

  it('a credential of a removed provider does not count: the last one that signs in stays (409 last_identity)', async () => {
    const { c, email } = await fullAccount();
    expect((await p.addPlain('retired')).status).toBe(0);
    await c.createAccountLinkingIntent();
    await c.linkIdentity((await c.providerToken('retired', await googleToken('retired-1'))).proof_id);
    const removeProvider = async () =>
      expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'retired')).status).toBe(0);
    await removeProvider();

    // Nobody signs in with `retired` any more: without the email the player could not come back.
    await expect(c.unlinkIdentity('email', email)).rejects.toMatchObject({ status: 409, code: 'last_identity' });
    // GET /me still lists both: the removed provider's credential is the player's to remove.
    expect((await c.me()).identities.map((i) => i.provider).sort()).toEqual(['email', 'retired']);
    expect(await audit('identity.unlinked', c.userId as string)).toEqual([]);

    // The provider is back (the same issuer): its credential signs in again, so the email may go.
    expect((await p.addPlain('retired')).status).toBe(0);
    expect(await c.unlinkIdentity('email', email)).toEqual({ unlinked: true });
    expect((await c.me()).identities).toEqual([{ provider: 'retired', provider_subject: 'retired-1' }]);
    await removeProvider();
  });

  it('a credential of a removed provider may go while one that signs in stays', async () => {
    const { c, email } = await fullAccount();
    expect((await p.addPlain('retiring')).status).toBe(0);
    await c.createAccountLinkingIntent();
    await c.linkIdentity((await c.providerToken('retiring', await googleToken('retiring-1'))).proof_id);
    expect((await admin(w.t.env, 'provider', 'remove', '--tenant', 'acme', '--id', 'retiring')).status).toBe(0);
    expect(await c.unlinkIdentity('retiring', 'retiring-1')).toEqual({ unlinked: true });
    expect((await c.me()).identities).toEqual([{ provider: 'email', provider_subject: email, email }]);
  });

  it('a chat-platform credential counts only in a tenant that has the chat platform', async () => {
    // `acme` has the chat platform, `beta` has none (a credential left from before, say).
    for (const [tenantId, clientId, unlinked] of [
      ['acme', 'cli_game', true],
      ['beta', 'cli_beta', false],
    ] as const) {
      const { c, email } = await fullAccount({ tenantId, clientId });
      await w.t.pg.query(
        `INSERT INTO identities (id, tenant_id, user_id, provider, provider_subject, email_verified, status, metadata)
         VALUES ($1, $2, $3, 'chat_platform', $4, false, 'active', '{}')`,
        [`idn_${randomBytes(12).toString('hex')}`, tenantId, c.userId, randomBytes(6).toString('hex')],
      );
      const removal = c.unlinkIdentity('email', email);
      if (unlinked) expect(await removal).toEqual({ unlinked: true });
      else await expect(removal).rejects.toMatchObject({ status: 409, code: 'last_identity' });
    }
  });

  it('two removals at once of an account’s last two credentials leave one', async () => {
    const { c, email } = await fullAccount();
    await c.createAccountLinkingIntent();
    await c.linkIdentity((await c.providerToken('google', await googleToken('race-g-1'))).proof_id);
    const results = await Promise.allSettled([
      c.unlinkIdentity('email', email),
      c.unlinkIdentity('google', 'race-g-1'),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({
      reason: { status: 409, code: 'last_identity' },
    });
    expect((await c.me()).identities).toHaveLength(1);
  });

  it('one intent and proof link once under parallel requests', async () => {
    const { c } = await fullAccount();
    await c.createAccountLinkingIntent();
    const proof = await c.providerToken('google', await googleToken('parallel-link-1'));
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => c.linkIdentity(proof.proof_id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status === 'rejected')
        .every((r) => (r.reason as { code: string }).code === 'invalid_proof'),
    ).toBe(true);
    expect(await audit('identity.linked', c.userId as string)).toHaveLength(1);
  });

  it('a guest has nothing to unlink', async () => {
    const guest = w.client();
    await guest.createGuest();
    await expect(guest.unlinkIdentity('google', 'x')).rejects.toMatchObject({ status: 404 });
  });
});
