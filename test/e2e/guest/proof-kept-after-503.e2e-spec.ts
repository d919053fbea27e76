import { Client } from 'pg';
import type { GuestClient } from '../../../sdk/src/guest-client';
import { PG_BASE } from '../../support/database';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { NATIVE_APP_ID, startProviders, type ProviderWorld } from '../../support/provider-fixtures';

/**
 * Contract 10 and 13: a PostgreSQL condition that refuses work answers 503 and changes nothing, so
 * the player's retry with the same proof succeeds. The removed-provider check
 * (RemovedProviders.refuseProofOfRemoved, an uncached read of identity_providers) runs after the
 * proof (and, for an upgrade, the linking intent) has been consumed in Redis and outside the undo
 * that puts them back: a statement timeout there answers 503 and leaves the proof spent.
 */
const cookieOf = (c: GuestClient): string => `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;
const flowOf = (c: GuestClient) => ({ client_id: 'cli_game', browser_flow_id: c.browserFlowId });

/** Runs `body` while another session holds identity_providers locked: reads of it wait until their statement timeout. */
async function whileProvidersLocked(databaseName: string, body: () => Promise<void>): Promise<void> {
  const pg = new Client({ connectionString: `${PG_BASE}/${databaseName}` });
  await pg.connect();
  try {
    await pg.query('BEGIN');
    await pg.query('LOCK TABLE identity_providers IN ACCESS EXCLUSIVE MODE');
    await body();
  } finally {
    await pg.query('ROLLBACK').catch(() => undefined);
    await pg.end();
  }
}

describe('a 503 from the removed-provider check spends no proof', () => {
  let w: GuestWorld;
  let p: ProviderWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: '500' });
    p = await startProviders(w);
  });
  afterAll(async () => {
    await p.stop();
    await w.close();
  });

  it('upgrade: 503 while identity_providers is unreadable, then the same proof upgrades the guest', async () => {
    const now = Math.floor(Date.now() / 1000);
    const guest = w.client();
    await guest.createGuest();
    await guest.createLinkingIntent();
    const idToken = await p.plain.sign({
      iss: p.plain.issuer,
      aud: NATIVE_APP_ID,
      sub: `late-check-${Date.now()}`,
      iat: now,
      exp: now + 300,
    });
    const proof = (await guest.providerToken('google', idToken)).proof_id;
    const upgrade = () =>
      w.t
        .auth()
        .post('/t/acme/guest/upgrade')
        .set('Authorization', `Bearer ${guest.accessToken as string}`)
        .set('Cookie', cookieOf(guest))
        .send({ ...flowOf(guest), proof_id: proof });

    await whileProvidersLocked(w.t.databaseName, async () => {
      const refused = await upgrade();
      expect({ status: refused.status, error: refused.body.error }).toEqual({
        status: 503,
        error: 'temporarily_unavailable',
      });
    });
    const retried = await upgrade();
    expect({ status: retried.status, error: retried.body.error }).toEqual({ status: 200, error: undefined });
  });

  it('sign-in: 503 while identity_providers is unreadable, then the same proof signs in', async () => {
    const now = Math.floor(Date.now() / 1000);
    const sub = `late-sign-in-${Date.now()}`;
    const token = (iat: number) => p.plain.sign({ iss: p.plain.issuer, aud: NATIVE_APP_ID, sub, iat, exp: now + 300 });
    const owner = w.client();
    await owner.createGuest();
    await owner.createLinkingIntent();
    await owner.upgrade((await owner.providerToken('google', await token(now))).proof_id);
    const other = w.client();
    await other.createGuest();
    const proof = (await other.providerToken('google', await token(now - 1))).proof_id;
    const signIn = () =>
      w.t
        .auth()
        .post('/t/acme/sign-in')
        .set('Cookie', cookieOf(other))
        .send({ ...flowOf(other), proof_id: proof });

    await whileProvidersLocked(w.t.databaseName, async () => {
      const refused = await signIn();
      expect({ status: refused.status, error: refused.body.error }).toEqual({
        status: 503,
        error: 'temporarily_unavailable',
      });
    });
    const retried = await signIn();
    expect({ status: retried.status, error: retried.body.error }).toEqual({ status: 200, error: undefined });
  });
});
