import { createHash } from 'node:crypto';
import { callbackUri, confirmCode, requestCode, signIn, startFlow, tokenRequest } from '../../support/management-flow';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Replay detection lasts the session's whole life (spec 2.2, contract section 3): a refresh token
 * rotated any number of times ago, or an authorization code long past its 60 s, still revokes
 * what it stands for when presented again.
 */
describe('replay detection for the whole life of a session', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  const managementRefresh = (refreshToken: string) =>
    tokenRequest(w.t, { grant_type: 'refresh_token', refresh_token: refreshToken });
  const customerRefresh = (refreshToken: string) =>
    w.t
      .auth()
      .post('/t/acme/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'cli_game' });
  const current = (accessToken: string) =>
    w.t.auth().get('/management-auth/current').set('Authorization', `Bearer ${accessToken}`);
  const guestIntent = (accessToken: string, browserFlowId: string) =>
    w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('Authorization', `Bearer ${accessToken}`)
      .send({ client_id: 'cli_game', browser_flow_id: browserFlowId });

  async function rotateChain(first: string, refresh: typeof managementRefresh, times: number): Promise<string[]> {
    const chain = [first];
    for (let i = 0; i < times; i++) chain.push((await refresh(chain.at(-1) as string).expect(200)).body.refresh_token);
    return chain;
  }

  it('control plane: a token rotated 20 times ago revokes the session when replayed', async () => {
    const tokens = await signIn(w.t, 'ancient-replay@studio.example');
    const chain = await rotateChain(tokens.refresh_token, managementRefresh, 20);
    const live = await managementRefresh(chain.at(-1) as string).expect(200);
    await current(live.body.access_token).expect(200);
    const replay = await managementRefresh(chain[0] as string).expect(400);
    expect(replay.body.error).toBe('invalid_grant');
    await current(live.body.access_token).expect(401);
    await managementRefresh(live.body.refresh_token).expect(400);
  });

  it('customer tenant: a token rotated 20 times ago revokes the session when replayed', async () => {
    const created = await w.client().createGuest();
    const chain = await rotateChain(created.refresh_token as string, customerRefresh, 20);
    const live = await customerRefresh(chain.at(-1) as string).expect(200);
    const replay = await customerRefresh(chain[1] as string).expect(400);
    expect(replay.body.error).toBe('invalid_grant');
    await customerRefresh(live.body.refresh_token).expect(400);
    await guestIntent(live.body.access_token, 'flw_AncientReplayFlow0001').expect(401);
  });

  it('a token of a generation that never existed, or with a forged MAC or secret, is refused and revokes nothing', async () => {
    const tokens = await signIn(w.t, 'forged-generation@studio.example');
    const [sid, , secret, mac] = tokens.refresh_token.split('.') as [string, string, string, string];
    await managementRefresh(`${sid}.7.${secret}.${mac}`).expect(400);
    // Anyone who read the session id off an access token could otherwise forge an "old" token.
    await managementRefresh(`${sid}.0.${secret}.${'A'.repeat(43)}`).expect(400);
    await managementRefresh(`${sid}.0.${'A'.repeat(43)}.${mac}`).expect(400);
    await current(tokens.access_token).expect(200);
    await managementRefresh(tokens.refresh_token).expect(200);
  });

  it('stores nothing from which a refresh token could be rebuilt', async () => {
    const tokens = await signIn(w.t, 'nothing-stored@studio.example');
    const [, , secret, mac] = tokens.refresh_token.split('.') as [string, string, string, string];
    const keys = await w.t.redisKeys();
    for (const k of keys.filter((k) => k.includes(tokens.session_id))) {
      const type = await w.t.redis.type(k);
      const value = type === 'hash' ? JSON.stringify(await w.t.redis.hgetall(k)) : String(await w.t.redis.get(k));
      expect(value).not.toContain(mac);
      expect(value).not.toContain(secret);
    }
    expect(await w.t.redis.hget(`s:{${tokens.session_id}}`, 'gen')).toBe('0');
  });

  it('control plane: of 20 parallel refreshes with one token exactly one wins, and the rest revoke the session', async () => {
    const first = (await signIn(w.t, 'parallel-refresh@studio.example')).refresh_token;
    const results = await Promise.all(Array.from({ length: 20 }, () => managementRefresh(first)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(19);
    // The BFF refreshes single-flight, so the spec's strict rule holds here (contract 13).
    const winner = results.find((r) => r.status === 200);
    await managementRefresh(winner?.body.refresh_token).expect(400);
  });

  it('an authorization code replayed after its 60 s still revokes the session it issued', async () => {
    const flow = await startFlow(w.t);
    const code = await confirmCode(
      w.t,
      flow,
      'late-code@studio.example',
      await requestCode(w.t, flow, 'late-code@studio.example'),
    );
    const exchange = () =>
      tokenRequest(w.t, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: callbackUri(w.t),
        code_verifier: flow.pkce.verifier,
      });
    const first = await exchange().expect(200);
    const digest = createHash('sha256').update(code).digest('base64url');
    // The code itself is gone; the consumed marker lives as long as the session can (24 h).
    expect(await w.t.redis.exists(`ac:{${digest}}`)).toBe(0);
    expect(await w.t.redis.ttl(`ac:{${digest}}:used`)).toBeGreaterThan(86_400 - 60);
    await exchange().expect(400);
    await current(first.body.access_token).expect(401);
    await managementRefresh(first.body.refresh_token).expect(400);
  });
});
