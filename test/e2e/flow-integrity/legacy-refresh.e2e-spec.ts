import { createHash, randomBytes } from 'node:crypto';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

// @redis-cluster session-store:ROTATE_LEGACY

/**
 * Sessions written by the release before refresh-token generations (`<sid>.<secret>` tokens, a
 * stored sha256 of the secret) keep working across the deploy: the first refresh moves them to
 * generation 1. Without this a guest who never linked a credential would lose the account.
 */
describe('refresh tokens of the previous release', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  const refresh = (refreshToken: string) =>
    w.t
      .auth()
      .post('/t/acme/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'cli_game' });

  /** Rewrites a live session into the previous release's layout and returns its old-style token. */
  async function legacySession(): Promise<{ sessionId: string; token: string }> {
    const created = await w.client().createGuest();
    const sessionId = created.session_id;
    const secret = randomBytes(32).toString('base64url');
    const k = `s:{${sessionId}}`;
    await w.t.redis.hdel(k, 'gen', 'guest');
    await w.t.redis.hset(k, 'rth', createHash('sha256').update(secret).digest('base64url'));
    await w.t.redis.rpush(`${k}:used`, 'an-older-digest');
    return { sessionId, token: `${sessionId}.${secret}` };
  }

  it('rotates once into the new format, and the session goes on', async () => {
    const { sessionId, token } = await legacySession();
    const first = await refresh(token).expect(200);
    expect(first.body.refresh_token).toMatch(new RegExp(`^${sessionId}\\.1\\.[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{43}$`));
    expect(await w.t.redis.hget(`s:{${sessionId}}`, 'rth')).toBeNull();
    expect(await w.t.redis.exists(`s:{${sessionId}}:used`)).toBe(0);
    await refresh(first.body.refresh_token).expect(200);
  });

  it('an old-format token used again, or with a wrong secret, is refused and revokes nothing', async () => {
    const { token } = await legacySession();
    const wrong = `${token.slice(0, token.lastIndexOf('.') + 1)}${randomBytes(32).toString('base64url')}`;
    expect((await refresh(wrong).expect(400)).body.error).toBe('invalid_grant');
    const first = await refresh(token).expect(200);
    expect((await refresh(token).expect(400)).body.error).toBe('invalid_grant');
    await refresh(first.body.refresh_token).expect(200);
  });

  it('concurrent refreshes with one old-format token: exactly one wins', async () => {
    const { token } = await legacySession();
    const answers = await Promise.all(Array.from({ length: 10 }, () => refresh(token)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 400)).toHaveLength(9);
  });
});
