import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createApp } from '../../../src/app.setup';
import { loadConfig } from '../../../src/config/config';
import { ControlPlaneSeedService } from '../../../src/directory/control-plane-seed.service';
import { createSuiteDatabase, dropSuiteDatabase } from '../../support/database';
import { eventually } from '../../support/eventually';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { emailPost, startFlow, authorizeQuery, pkcePair } from '../../support/management-flow';
import { PrivateRedis } from '../../support/private-redis';
import { freePort, testEnv } from '../../support/test-app';

/**
 * Contract section 10 and spec 1.6: a full Redis (maxmemory with noeviction) refuses writes,
 * which the service answers with 503, never 500 and never success, and it serves again as soon
 * as memory frees, without a restart. A Redis that evicts instead would fail open, so the service
 * refuses to start on one.
 */
describe('Redis eviction policy at start-up', () => {
  let db: string;
  const redises: PrivateRedis[] = [];
  beforeAll(async () => {
    db = await createSuiteDatabase();
  });
  afterAll(async () => {
    await Promise.all(redises.map((r) => r.stop()));
    await dropSuiteDatabase(db);
  });

  async function boot(redis: PrivateRedis) {
    const app = await createApp(
      loadConfig(testEnv(await freePort(), db, 'smtp://127.0.0.1:9', { REDIS_URL: redis.url })),
    );
    await app.get(ControlPlaneSeedService).seed();
    try {
      await app.listen(0);
      return { app, error: null };
    } catch (err) {
      await app.close().catch(() => undefined);
      return { app: null, error: (err as Error).message };
    }
  }

  it.each(['allkeys-lru', 'volatile-ttl'])('refuses to start on a Redis with maxmemory-policy %s', async (policy) => {
    const redis = await PrivateRedis.start(['--maxmemory-policy', policy]);
    redises.push(redis);
    const { error } = await boot(redis);
    expect(error).toContain(`maxmemory-policy ${policy}`);
    expect(error).toContain('noeviction');
  });

  it('starts where CONFIG is not allowed, and /readyz says the policy is unverified', async () => {
    const redis = await PrivateRedis.start();
    redises.push(redis);
    await redis.serviceMay('-config');
    const { app, error } = await boot(redis);
    expect(error).toBeNull();
    const url = await app!.getUrl();
    const res = await fetch(`${url.replace('[::1]', '127.0.0.1')}/readyz`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { warnings?: string[] }).warnings).toEqual([
      'redis maxmemory-policy could not be read; it must be noeviction',
    ]);
    await app!.close();
  });
});

describe('a Redis that refuses work: full (noeviction) or busy', () => {
  let redis: PrivateRedis;
  let admin: Redis;
  let w: GuestWorld;
  beforeAll(async () => {
    redis = await PrivateRedis.start(['--maxmemory-policy', 'noeviction']);
    admin = new Redis(redis.url);
    w = await startGuestWorld({ REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await w.close();
    admin.disconnect();
    await redis.stop();
  });

  const flowBody = () => ({ client_id: 'cli_game', browser_flow_id: `flw_${randomBytes(16).toString('base64url')}` });
  const guest = () => w.t.auth().post('/t/acme/guest').send(flowBody());
  const authorize = () =>
    w.t
      .auth()
      .get('/management-auth/authorize')
      .query(authorizeQuery(w.t, pkcePair(), randomBytes(8).toString('hex')));
  const tenantEmail = () =>
    w.t
      .auth()
      .post('/t/acme/email/start')
      .send({ ...flowBody(), email: 'full@studio.example' });
  const tenantSignIn = () =>
    w.t
      .auth()
      .post('/t/acme/sign-in')
      .send({ ...flowBody(), proof_id: `prf_${randomBytes(16).toString('base64url')}` });
  const consoleStart = () => w.t.console().post('/api/auth/start').set('Origin', w.t.consoleOrigin);

  const FILLERS = 32;
  const usedMemory = async (): Promise<number> => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);

  /**
   * 4 MiB of filler, then maxmemory 2 MiB below what is used: every write is refused until the
   * filler goes, whatever small keys expire meanwhile.
   */
  async function fill(): Promise<void> {
    for (let i = 0; i < FILLERS; i++) await admin.set(`filler:${i}`, randomBytes(96 * 1024).toString('base64'));
    await admin.config('SET', 'maxmemory', String((await usedMemory()) - 2 * 1024 * 1024));
    await expect(admin.set('probe', 'x')).rejects.toThrow(/OOM/);
  }

  it('answers 503 on guest creation and every sign-in step, then recovers when memory frees', async () => {
    const controlFlow = await startFlow(w.t);
    await fill();
    for (const send of [guest, authorize, tenantEmail, tenantSignIn, consoleStart]) {
      const res = await send();
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('temporarily_unavailable');
    }
    const start = await emailPost(w.t, 'start', controlFlow, { email: 'full@studio.example' });
    expect(start.status).toBe(503);
    expect(w.t.smtp.countFor('full@studio.example')).toBe(0);

    await admin.del(...Array.from({ length: FILLERS }, (_, i) => `filler:${i}`));
    expect((await guest()).status).toBe(201);
    expect((await authorize()).status).toBe(200);
    expect((await tenantEmail()).status).toBe(202);
    expect((await tenantSignIn()).status).toBe(403);
    expect((await consoleStart()).status).toBe(303);
    await emailPost(w.t, 'start', controlFlow, { email: 'full@studio.example' }).expect(202);
  });

  it('answers 503 while a script keeps Redis busy, and recovers once it is killed', async () => {
    await admin.config('SET', 'busy-reply-threshold', '50');
    const looper = new Redis(redis.url);
    const busy = looper.eval('local i = 0 while true do i = i + 1 end', 0).catch((err: Error) => err.message);
    // Busy once Redis answers other connections BUSY (past busy-reply-threshold).
    await eventually(
      () =>
        admin.ping().then(
          () => false,
          (err: Error) => err.message.startsWith('BUSY'),
        ),
      5_000,
    );
    for (const send of [guest, authorize, tenantSignIn]) {
      const res = await send();
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('temporarily_unavailable');
    }
    await admin.call('SCRIPT', 'KILL');
    expect(await busy).toContain('killed');
    looper.disconnect();
    expect((await guest()).status).toBe(201);
  });
});
