import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { decodeProtectedHeader } from 'jose';
import { callbackUri, emailPost, requestCode, signIn, startFlow, tokenRequest } from '../../support/management-flow';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';
import { readTestSecrets } from '../../support/test-secrets';

describe('two instances sharing PostgreSQL and Redis', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ RATE_LIMIT_MGMT_EMAIL_SEND: '3/60' });
    b = await startTestApp({}, { shareWith: a });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a session created on one instance works on and is revoked by the other', async () => {
    const tokens = await signIn(a, 'two@studio.example');
    await b.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    const rotated = await tokenRequest(b, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(
      200,
    );
    // The rotation on b is seen by a: the old refresh token is a replay there.
    await tokenRequest(a, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(400);
    await a
      .auth()
      .get('/management-auth/current')
      .set('Authorization', `Bearer ${rotated.body.access_token}`)
      .expect(401);
  });

  it('revocation through one instance is honoured by the other at once', async () => {
    const tokens = await signIn(a, 'two-revoke@studio.example');
    await b
      .auth()
      .post('/management-auth/revoke-session')
      .set('Authorization', consoleBasic(b))
      .send({ session_id: tokens.session_id })
      .expect(200);
    await a.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`).expect(401);
  });

  it('shares one-time records: an email code and an authorization code are each redeemed once across both', async () => {
    const email = 'two-once@studio.example';
    const flow = await startFlow(a);
    const code = await requestCode(a, flow, email);
    const confirms = await Promise.all(
      Array.from({ length: 10 }, (_, i) => emailPost(i % 2 === 0 ? a : b, 'confirm', flow, { email, code })),
    );
    expect(confirms.map((r) => r.status).sort()).toEqual([200, ...Array<number>(9).fill(400)]);
    const won = confirms.find((r) => r.status === 200);
    const authorizationCode = new URL(won?.body.redirect_to as string).searchParams.get('code') as string;
    const body = {
      grant_type: 'authorization_code',
      code: authorizationCode,
      redirect_uri: callbackUri(a),
      code_verifier: flow.pkce.verifier,
    };
    const exchanges = await Promise.all(Array.from({ length: 10 }, (_, i) => tokenRequest(i % 2 === 0 ? a : b, body)));
    // At most one, not exactly one: a replay revokes the code's session id with a tombstone, usually
    // before the first exchange has created it (contract section 3), so none may succeed.
    const winners = exchanges.filter((r) => r.status === 200).length;
    expect(winners).toBeLessThanOrEqual(1);
    expect(exchanges.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body.error}`)).toEqual(
      Array<string>(10 - winners).fill('400 invalid_grant'),
    );
    // A replay through either instance is seen by both: whatever the code issued is revoked.
    for (const r of exchanges.filter((x) => x.status === 200)) {
      await a
        .auth()
        .get('/management-auth/current')
        .set('Authorization', `Bearer ${r.body.access_token as string}`)
        .expect(401);
    }
  });

  it('shares rate limits between instances', async () => {
    const email = 'shared-limit@studio.example';
    await emailPost(a, 'start', await startFlow(a), { email }).expect(202);
    await emailPost(b, 'start', await startFlow(b), { email }).expect(202);
    await emailPost(a, 'start', await startFlow(a), { email }).expect(202);
    await emailPost(b, 'start', await startFlow(b), { email }).expect(429);
  });
});

describe('signing-key rotation through the key ring', () => {
  let before: TestApp;
  let after: TestApp;
  let newKid: string;
  beforeAll(async () => {
    before = await startTestApp({ RATE_LIMITS: 'off' });
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    newKid = 'test-rs-2';
    const newKey = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: newKid };
    const old = (JSON.parse(readTestSecrets().SIGNING_KEYS) as { keys: JWK[] }).keys;
    // The new key is listed first, so it signs; the old one still verifies.
    after = await startTestApp({ SIGNING_KEYS: JSON.stringify({ keys: [newKey, ...old] }) }, { shareWith: before });
  });
  afterAll(async () => {
    await after.close();
    await before.close();
  });

  it('keeps tokens of the previous key valid, signs new ones with the new key, and publishes both', async () => {
    const old = await signIn(before, 'rotation@studio.example');
    await after.auth().get('/management-auth/current').set('Authorization', `Bearer ${old.access_token}`).expect(200);
    const fresh = await tokenRequest(after, { grant_type: 'refresh_token', refresh_token: old.refresh_token }).expect(
      200,
    );
    expect(decodeProtectedHeader(fresh.body.access_token).kid).toBe(newKid);
    const jwks = await after.auth().get('/t/control-plane/.well-known/jwks.json').expect(200);
    expect(jwks.body.keys.map((k: JWK) => k.kid)).toEqual([newKid, 'test-rs-1']);
    // An instance that does not know the new key yet refuses its tokens (unknown kid).
    await before
      .auth()
      .get('/management-auth/current')
      .set('Authorization', `Bearer ${fresh.body.access_token}`)
      .expect(401);
  });
});
