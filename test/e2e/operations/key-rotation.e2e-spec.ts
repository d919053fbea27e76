import { randomBytes } from 'node:crypto';
import { ChatPlatformAppsRepository } from '../../../src/directory/chat-platform-apps.repository';
import { IdentityProvidersRepository } from '../../../src/directory/identity-providers.repository';
import { admin } from '../../support/admin-cli';
import { consoleSignIn } from '../../support/console-flow';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { signIn, tokenRequest } from '../../support/management-flow';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';

const key = (): string => randomBytes(32).toString('base64url');

/** Contract 12: PRIVACY_KEY, CONSOLE_SESSION_KEY and the console client secret rotate without a sign-out. */
describe('key rotation without a sign-out (contract 12)', () => {
  let w: GuestWorld;
  let rotated: TestApp | null = null;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await rotated?.close();
    await w.close();
  });

  it('an instance with new keys first keeps every session, refresh token and sealed secret of the old keys', async () => {
    const old = w.t.env;
    const console = await consoleSignIn(w.t, 'rotate@studio.example');
    const management = await signIn(w.t, 'rotate@studio.example');
    const guest = await w.client().createGuest();
    // An OpenID Connect provider's secret, sealed like the chat secret (contract 14).
    await w.t.app.get(IdentityProvidersRepository).add({
      tenantId: 'acme',
      id: 'google',
      issuer: 'https://accounts.google.com',
      clientId: 'web-client',
      scopes: ['openid', 'email'],
      nativeClientIds: [],
      endpoints: {
        authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
        token_endpoint: 'https://oauth2.googleapis.com/token',
        jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'RS256',
      },
      credential: { kind: 'client_secret', secret: 'provider-secret-1' },
    });
    const privacy = `${key()},${old.PRIVACY_KEY}`;
    const secret = randomBytes(32).toString('base64url');
    rotated = await startTestApp(
      {
        PRIVACY_KEY: privacy,
        CONSOLE_SESSION_KEY: `${key()},${old.CONSOLE_SESSION_KEY}`,
        CONSOLE_CLIENT_SECRET: `${secret},${old.CONSOLE_CLIENT_SECRET}`,
      },
      { shareWith: w.t },
    );
    const r = rotated;

    // The console session sealed under the old key opens; the BFF reseals it under the new one.
    await r.console().get('/api/auth/current').set('Cookie', console.cookie).expect(200);
    // Refresh tokens MACed under the old privacy key still refresh.
    await tokenRequest(r, { grant_type: 'refresh_token', refresh_token: management.refresh_token }).expect(200);
    await r
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: guest.refresh_token, client_id: 'cli_game' })
      .expect(200);
    // Both console client secrets authenticate during the overlap.
    for (const s of [secret, old.CONSOLE_CLIENT_SECRET]) {
      const basic = `Basic ${Buffer.from(`cli_console:${s}`).toString('base64')}`;
      await r
        .auth()
        .post('/management-auth/revoke-session')
        .set('Authorization', basic)
        .send({ session_id: 'ses_aaaaaaaaaaaaaaaaaaaa' })
        .expect(200);
    }
    await r
      .auth()
      .post('/management-auth/revoke-session')
      .set('Authorization', consoleBasic(r))
      .send({ session_id: 'ses_aaaaaaaaaaaaaaaaaaaa' })
      .expect(200);

    // The chat secret sealed under the old key opens, and `chat reseal` moves it to the new key.
    expect((await r.app.get(ChatPlatformAppsRepository).find('acme'))?.clientSecret).toBe('chat-secret-1');
    const resealed = await admin({ DATABASE_URL: old.DATABASE_URL!, PRIVACY_KEY: privacy }, 'chat', 'reseal');
    expect(resealed.out).toEqual({ resealed: 1, current: 0, unreadable: [] });
    expect((await admin({ DATABASE_URL: old.DATABASE_URL!, PRIVACY_KEY: privacy }, 'chat', 'reseal')).out).toEqual({
      resealed: 0,
      current: 1,
      unreadable: [],
    });
    // With the old key gone the secret still opens: it is sealed under the new one now.
    const newOnly = await admin(
      { DATABASE_URL: old.DATABASE_URL!, PRIVACY_KEY: privacy.split(',')[0]! },
      'chat',
      'reseal',
    );
    expect(newOnly.out).toEqual({ resealed: 0, current: 1, unreadable: [] });

    // So does a provider's secret, with `provider reseal`.
    const providerSecret = async () => {
      const found = await r.app.get(IdentityProvidersRepository).find('acme', 'google');
      return found?.credential.kind === 'client_secret' ? found.credential.secret : null;
    };
    expect(await providerSecret()).toBe('provider-secret-1');
    const env = { DATABASE_URL: old.DATABASE_URL!, PRIVACY_KEY: privacy };
    expect((await admin(env, 'provider', 'reseal')).out).toEqual({ resealed: 1, current: 0, unreadable: [] });
    expect((await admin(env, 'provider', 'reseal')).out).toEqual({ resealed: 0, current: 1, unreadable: [] });
    const onlyNew = { DATABASE_URL: old.DATABASE_URL!, PRIVACY_KEY: privacy.split(',')[0]! };
    expect((await admin(onlyNew, 'provider', 'reseal')).out).toEqual({ resealed: 0, current: 1, unreadable: [] });
    expect(await providerSecret()).toBe('provider-secret-1');
  });

  it('what an instance with new keys first seals and digests needs only the new keys once the old ones are dropped', async () => {
    const old = w.t.env;
    const privacy = key();
    const session = key();
    const overlap = await startTestApp(
      { PRIVACY_KEY: `${privacy},${old.PRIVACY_KEY}`, CONSOLE_SESSION_KEY: `${session},${old.CONSOLE_SESSION_KEY}` },
      { shareWith: w.t },
    );
    let newOnly: TestApp | null = null;
    try {
      // Made during the overlap: a console session (sealed), a management and a guest refresh token (MACed).
      const console = await consoleSignIn(overlap, 'overlap@studio.example');
      const management = await signIn(overlap, 'overlap@studio.example');
      const guest = await overlap
        .auth()
        .post('/t/acme/guest')
        .send({ client_id: 'cli_game', browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` })
        .expect(201);

      // The rotation ends: the old keys are gone.
      newOnly = await startTestApp({ PRIVACY_KEY: privacy, CONSOLE_SESSION_KEY: session }, { shareWith: w.t });
      await newOnly.console().get('/api/auth/current').set('Cookie', console.cookie).expect(200);
      await tokenRequest(newOnly, { grant_type: 'refresh_token', refresh_token: management.refresh_token }).expect(200);
      await newOnly
        .auth()
        .post('/t/acme/token')
        .send({ grant_type: 'refresh_token', refresh_token: guest.body.refresh_token, client_id: 'cli_game' })
        .expect(200);
    } finally {
      await newOnly?.close();
      await overlap.close();
    }
  });

  /**
   * Instances roll one at a time, so during each step of the drill (docs/operations.md, "Key
   * rotation drills") instances of that step and of the step before serve the same sessions, and
   * what one seals or MACs the other must open: a console session it cannot open is 401 with its
   * cookie expired, a refresh token it cannot verify is 400 `invalid_grant` (the BFF then drops
   * the console session, a game its player's). So the new key is listed last before it is first.
   */
  it('a rolling rotation signs nobody out: mid-roll, an instance not yet rolled serves what a rolled one made', async () => {
    const old = w.t.env;
    const privacy = key();
    const session = key();
    /** A console session, a management and a guest refresh token, made on one instance. */
    const madeOn = async (t: TestApp, email: string) => ({
      console: await consoleSignIn(t, email),
      management: await signIn(t, email),
      guest: (
        await t
          .auth()
          .post('/t/acme/guest')
          .send({ client_id: 'cli_game', browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` })
          .expect(201)
      ).body as { refresh_token: string },
    });
    const servedBy = async (t: TestApp, made: Awaited<ReturnType<typeof madeOn>>): Promise<void> => {
      await t.console().get('/api/auth/current').set('Cookie', made.console.cookie).expect(200);
      await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: made.management.refresh_token }).expect(200);
      await t
        .auth()
        .post('/t/acme/token')
        .send({ grant_type: 'refresh_token', refresh_token: made.guest.refresh_token, client_id: 'cli_game' })
        .expect(200);
    };
    // Step 1: the new keys listed after the old ones, beside instances with the old keys alone.
    const step1 = await startTestApp(
      { PRIVACY_KEY: `${old.PRIVACY_KEY},${privacy}`, CONSOLE_SESSION_KEY: `${old.CONSOLE_SESSION_KEY},${session}` },
      { shareWith: w.t },
    );
    let step2: TestApp | null = null;
    try {
      await servedBy(w.t, await madeOn(step1, 'step1@studio.example'));
      // Step 2: the new keys first, beside instances of step 1.
      step2 = await startTestApp(
        { PRIVACY_KEY: `${privacy},${old.PRIVACY_KEY}`, CONSOLE_SESSION_KEY: `${session},${old.CONSOLE_SESSION_KEY}` },
        { shareWith: w.t },
      );
      await servedBy(step1, await madeOn(step2, 'step2@studio.example'));
    } finally {
      await step2?.close();
      await step1.close();
    }
  });

  it('a key list with a bad member is refused at start-up, naming the key', async () => {
    const bad = await admin({ DATABASE_URL: w.t.env.DATABASE_URL!, PRIVACY_KEY: `${key()},short` }, 'chat', 'reseal');
    expect(JSON.parse(bad.stderr).message).toContain('PRIVACY_KEY (key 2): must hold at least 32 bytes');
  });
});
