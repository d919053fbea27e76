import { decodeJwt } from 'jose';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

const claim = (jwt: string | undefined) => decodeJwt(jwt as string).guest;

/** Contract section 11: `guest` in customer access and ID tokens, for game servers. */
describe('the guest claim', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  const refresh = (refreshToken: string | undefined) =>
    w.t
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'cli_game' })
      .expect(200);

  it('is true for a guest (created and refreshed) and false once upgraded (upgraded and refreshed)', async () => {
    const c = w.client();
    const created = await c.createGuest();
    expect(claim(created.access_token)).toBe(true);
    expect(claim(created.id_token)).toBe(true);
    const again = (await refresh(created.refresh_token)).body;
    expect(claim(again.access_token)).toBe(true);
    expect(claim(again.id_token)).toBe(true);

    await c.createLinkingIntent();
    const upgraded = await c.upgrade(await emailProof(w, c, 'claim@example.com'));
    expect(upgraded.user_id).toBe(created.user_id);
    expect(claim(upgraded.access_token)).toBe(false);
    expect(claim(upgraded.id_token)).toBe(false);
    const later = (await refresh(upgraded.refresh_token)).body;
    expect(claim(later.access_token)).toBe(false);
    expect(claim(later.id_token)).toBe(false);
  });

  it('is false after an explicit sign-in to an account', async () => {
    const c = w.client();
    const signedIn = await c.signIn(await emailProof(w, c, 'claim-sign-in@example.com'));
    expect(claim(signedIn.access_token)).toBe(false);
    expect(claim(signedIn.id_token)).toBe(false);
  });

  it('is read from the account for a session stored before sessions recorded it', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await w.t.redis.hdel(`s:{${created.session_id}}`, 'guest');
    const refreshed = (await refresh(created.refresh_token)).body;
    expect(claim(refreshed.access_token)).toBe(true);
  });
});
