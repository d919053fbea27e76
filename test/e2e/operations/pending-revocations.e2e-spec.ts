import { PendingRevocationsWorker } from '../../../src/directory/pending-revocations.worker';
import { MetricsService } from '../../../src/platform/metrics/metrics.service';
import { admin } from '../../support/admin-cli';
import { addMember, createTenant } from '../../support/console-fixtures';
import { eventually } from '../../support/eventually';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { CONSOLE_SCOPES, signIn, tokenRequest, type ManagementTokens } from '../../support/management-flow';
import { PrivateRedis } from '../../support/private-redis';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * A deactivation, or a control-plane session's revocation, whose Redis part fails after PostgreSQL
 * committed it: the management bearer and refresh read only Redis, so the developer would stay
 * signed in until someone ran the command again. The transaction notes the revocation, and the
 * running service carries it out once Redis takes writes again (docs/operations.md, "Pending
 * revocations").
 */
describe('pending revocations: the service finishes a revocation Redis refused', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;
  let metricsUrl: string;
  const run = (...argv: string[]) => admin(w.t.env, ...argv);
  const pending = async (): Promise<string[]> =>
    (await w.t.pg.query('SELECT user_id FROM pending_revocations ORDER BY id')).rows.map(
      (r: { user_id: string }) => r.user_id,
    );
  const gauge = async (): Promise<number> => {
    const line = (await (await fetch(metricsUrl)).text())
      .split('\n')
      .find((l) => l.startsWith('svc_pending_revocations '));
    return line ? Number(line.split(' ').pop()) : Number.NaN;
  };
  const current = (t: TestApp, accessToken: string) =>
    t.auth().get('/management-auth/current').set('Authorization', `Bearer ${accessToken}`);
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    w = await startGuestWorld({
      REDIS_URL: redis.url,
      RATE_LIMITS: 'off',
      METRICS_PORT: '0',
      PENDING_REVOCATION_INTERVAL_MS: '200',
    });
    metricsUrl = `http://127.0.0.1:${w.t.app.get(MetricsService).port}/metrics`;
    await createTenant(w.t, 'studio', 'Studio');
  });
  afterAll(async () => {
    await w.close();
    await redis.stop();
  });

  it('user deactivate: the command fails saying so, and the service revokes the session once Redis is back', async () => {
    const userId = await addMember(w.t, 'studio', 'gone@studio.example', 'viewer');
    const tokens = await signIn(w.t, 'gone@studio.example');
    await redis.withWritesRefused(async () => {
      const r = await run('user', 'deactivate', '--email', 'gone@studio.example');
      expect(r.status).toBe(1);
      expect(JSON.parse(r.stderr)).toEqual({
        error: 'failed',
        message: expect.stringContaining('the running service retries the revocation until it succeeds') as string,
      });
      // The service's own rounds fail too while Redis refuses: the note stays and is counted.
      expect(await pending()).toEqual([userId]);
      await eventually(async () => (await gauge()) === 1, 5_000);
      expect(await pending()).toEqual([userId]);
      await current(w.t, tokens.access_token).expect(200);
    });

    // Nobody runs the command again: the service's next round revokes the session.
    await eventually(async () => (await current(w.t, tokens.access_token)).status === 401, 5_000);
    await tokenRequest(w.t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(400);
    expect(await pending()).toEqual([]);
    await eventually(async () => (await gauge()) === 0, 5_000);
  });

  it('contract 12: a deactivated developer is refused at once on tenant routes, even while Redis refuses the revocation', async () => {
    // The deactivation is committed in PostgreSQL, which the membership guard reads on every
    // tenant request anyway: a deactivated owner must not change the tenant in the meantime.
    await addMember(w.t, 'studio', 'ex-owner@studio.example', 'owner');
    const tokens = await signIn(w.t, 'ex-owner@studio.example', CONSOLE_SCOPES);
    await redis.withWritesRefused(async () => {
      expect((await run('user', 'deactivate', '--email', 'ex-owner@studio.example')).status).toBe(1);
      const res = await w.t
        .auth()
        .post('/management/tenants/studio/members')
        .set('Authorization', `Bearer ${tokens.access_token}`)
        .send({ email: 'backdoor@studio.example', role: 'owner' });
      expect(res.status).not.toBe(201);
      expect([401, 403]).toContain(res.status);
    });
    const { rows } = await w.t.pg.query(
      `SELECT m.role FROM memberships m JOIN identities i ON i.user_id = m.user_id
        WHERE m.tenant_id = 'studio' AND i.email = 'backdoor@studio.example'`,
    );
    expect(rows).toEqual([]);
    await eventually(async () => (await current(w.t, tokens.access_token)).status === 401, 5_000);
  });

  it("the console's player deactivation: 503 while Redis refuses, and the player's tokens end once it is back", async () => {
    await addMember(w.t, 'acme', 'admin@acme.example', 'admin');
    const member = await signIn(w.t, 'admin@acme.example', CONSOLE_SCOPES);
    const player = await w.client().createGuest();
    const me = () => w.t.auth().get('/t/acme/me').set('Authorization', `Bearer ${player.access_token}`);
    await redis.withWritesRefused(async () => {
      const res = await w.t
        .auth()
        .post(`/management/tenants/acme/users/${player.user_id}/deactivate`)
        .set('Authorization', `Bearer ${member.access_token}`);
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 503, error: 'temporarily_unavailable' });
      expect(await pending()).toEqual([player.user_id]);
      // The customer bearer reads only Redis too: the access token works until the revocation lands.
      await me().expect(200);
    });

    await eventually(async () => (await me()).status === 401, 5_000);
    expect(await pending()).toEqual([]);
  });

  /** Each way a control-plane session is revoked alone, and what it answers while Redis refuses. */
  const revocations: Record<string, (tokens: ManagementTokens) => Promise<{ status: number; said?: string }>> = {
    'POST /management-auth/revoke': async (tokens) => {
      const res = await w.t
        .auth()
        .post('/management-auth/revoke')
        .set('Authorization', `Bearer ${tokens.access_token}`);
      return { status: res.status };
    },
    'session revoke': async (tokens) => {
      const r = await run('session', 'revoke', '--id', tokens.session_id);
      return { status: r.status, said: (JSON.parse(r.stderr) as { message: string }).message };
    },
  };

  it.each(Object.keys(revocations))(
    '%s: a revocation Redis refused fails, and the service carries it out once Redis is back',
    async (way) => {
      const email = `${way.replace(/\W+/g, '-')}@studio.example`;
      const userId = await addMember(w.t, 'studio', email, 'viewer');
      const tokens = await signIn(w.t, email);
      await redis.withWritesRefused(async () => {
        const answer = await revocations[way]!(tokens);
        expect(answer).toEqual(
          way === 'session revoke'
            ? { status: 1, said: expect.stringContaining(`session ${tokens.session_id} is revoked, but`) as string }
            : { status: 503 },
        );
        expect(await pending()).toEqual([userId]);
      });

      await eventually(async () => (await current(w.t, tokens.access_token)).status === 401, 5_000);
      await tokenRequest(w.t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(400);
      expect(await pending()).toEqual([]);
    },
  );

  it('user deactivate that succeeds leaves no note behind', async () => {
    await addMember(w.t, 'studio', 'fine@studio.example', 'viewer');
    const tokens = await signIn(w.t, 'fine@studio.example');
    const r = await run('user', 'deactivate', '--email', 'fine@studio.example');
    expect(r.out).toMatchObject({ user: { changed: true }, revoked_sessions: 1 });
    expect(await pending()).toEqual([]);
    await current(w.t, tokens.access_token).expect(401);
  });

  it('two instances work through one backlog at once: each note is carried out, none fails, all are gone', async () => {
    const logLines: string[] = [];
    const second = await startTestApp({ LOG_LEVEL: 'warn' }, { shareWith: w.t, logLines });
    try {
      // More notes than one round claims, so the rounds of both instances overlap on the table.
      const players = [];
      for (let i = 0; i < 45; i++) players.push(await w.client().createGuest());
      await w.t.pg.query('INSERT INTO pending_revocations (user_id) SELECT unnest($1::text[])', [
        players.map((p) => p.user_id),
      ]);
      const workers = [w.t.app.get(PendingRevocationsWorker), second.app.get(PendingRevocationsWorker)];
      await Promise.all([...workers, ...workers].map((worker) => worker.runRound()));

      expect(await pending()).toEqual([]);
      expect(logLines.filter((l) => l.includes('pending revocations'))).toEqual([]);
      for (const p of players) {
        await w.t.auth().get('/t/acme/me').set('Authorization', `Bearer ${p.access_token}`).expect(401);
      }
    } finally {
      await second.close();
    }
  });
});
