import { Logger } from '@nestjs/common';
import type { AppConfig } from '../../src/config/config';
import type {
  PendingRevocation,
  PendingRevocationsRepository,
  RetryRound,
} from '../../src/directory/pending-revocations.repository';
import { PendingRevocationsWorker } from '../../src/directory/pending-revocations.worker';
import type { UserDeactivation } from '../../src/directory/user-deactivation';
import { MetricsService } from '../../src/platform/metrics/metrics.service';
import type { SessionStore } from '../../src/platform/session-store/session-store';

/**
 * One round of the worker against stand-ins of its ports: which revocation each note gets, when a
 * round stops, and that PostgreSQL or Redis failing never makes it throw (the real claim, the
 * SKIP LOCKED sharing and Redis are in e2e/operations/pending-revocations).
 */
describe('PendingRevocationsWorker: one round', () => {
  const config = { pendingRevocationIntervalMs: 5_000 } as AppConfig;
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  afterEach(() => warn.mockClear());
  afterAll(() => warn.mockRestore());

  const NOTES: PendingRevocation[] = [
    { id: '1', userId: 'usr_a', sessionId: null },
    { id: '2', userId: 'usr_b', sessionId: 'ses_b' },
  ];

  type Retry = PendingRevocationsRepository['retry'];

  /** A worker whose notes come from `claims`, one call per claim, and whose Redis calls go to `done`. */
  function worker(
    claims: Array<PendingRevocation[] | Error>,
    backlog: () => Promise<number>,
    opts: { redisFails?: boolean; retry?: Retry } = {},
  ) {
    const redisFails = opts.redisFails ?? false;
    const done: string[] = [];
    const fromClaims: Retry = async (
      limit: number,
      carryOut: (p: PendingRevocation) => Promise<void>,
    ): Promise<RetryRound> => {
      const claim = claims.shift() ?? [];
      if (claim instanceof Error) throw claim;
      let carriedOut = 0;
      for (const p of claim) {
        try {
          await carryOut(p);
        } catch (failure) {
          return { carriedOut, full: false, failure };
        }
        carriedOut += 1;
      }
      return { carriedOut, full: claim.length === limit, failure: null };
    };
    const notes = {
      retry: opts.retry ?? fromClaims,
      backlog,
    } as unknown as PendingRevocationsRepository;
    const fail = () => Promise.reject(new Error('Connection is closed.'));
    const deactivation = {
      revokeSessions: (userId: string) => (redisFails ? fail() : (done.push(userId), Promise.resolve(1))),
    } as unknown as UserDeactivation;
    const sessions = {
      revoke: (sessionId: string) => (redisFails ? fail() : (done.push(sessionId), Promise.resolve(true))),
    } as unknown as SessionStore;
    const metrics = new MetricsService(config);
    return { w: new PendingRevocationsWorker(config, notes, deactivation, sessions, metrics), done, metrics };
  }
  const gauge = async (metrics: MetricsService): Promise<number | undefined> =>
    (await metrics.pendingRevocations.get()).values[0]?.value;

  it('revokes every session of a deactivated user, or the one session noted, and publishes the backlog', async () => {
    const { w, done, metrics } = worker([NOTES], () => Promise.resolve(0));
    await w.runRound();
    expect(done).toEqual(['usr_a', 'ses_b']);
    expect(await gauge(metrics)).toBe(0);
    expect(warn).not.toHaveBeenCalled();
  });

  it('claims again while claims come back full, and stops at the first short one', async () => {
    const full = Array.from({ length: 20 }, (_, i) => ({ id: String(i), userId: `usr_${i}`, sessionId: null }));
    const { w, done } = worker([full, NOTES, [{ id: 'x', userId: 'usr_never', sessionId: null }]], () =>
      Promise.resolve(1),
    );
    await w.runRound();
    expect(done).toHaveLength(22);
    expect(done).not.toContain('usr_never');
  });

  it('Redis refusing: the round stops, keeps the notes, warns once naming the dependency, and counts them', async () => {
    const { w, done, metrics } = worker([NOTES], () => Promise.resolve(2), { redisFails: true });
    await expect(w.runRound()).resolves.toBeUndefined();
    expect(done).toEqual([]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]).toEqual([
      { dependency: 'redis', err: 'Error: Connection is closed.' },
      'pending revocations kept for the next round',
    ]);
    expect(await gauge(metrics)).toBe(2);
  });

  it('PostgreSQL refusing the claim or the count: the round resolves with one warning', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const claimRefused = worker([refused], () => Promise.resolve(0));
    await expect(claimRefused.w.runRound()).resolves.toBeUndefined();
    const countRefused = worker([NOTES], () => Promise.reject(refused));
    await expect(countRefused.w.runRound()).resolves.toBeUndefined();
    expect(warn.mock.calls.map(([fields]) => (fields as { dependency: string }).dependency)).toEqual([
      'postgres',
      'postgres',
    ]);
  });

  it('stops its timer on shutdown and waits for a round under way', async () => {
    jest.useFakeTimers();
    try {
      let release: () => void = () => undefined;
      const claimed = new Promise<PendingRevocation[]>((resolve) => {
        release = () => resolve(NOTES);
      });
      const retry = jest.fn(async () => {
        await claimed;
        return { carriedOut: 0, full: false, failure: null };
      });
      const slow = worker([], () => Promise.resolve(0), { retry });
      slow.w.onApplicationBootstrap();
      jest.advanceTimersByTime(5_000);
      expect(retry).toHaveBeenCalledTimes(1);
      let stopped = false;
      const stopping = slow.w.onModuleDestroy().then(() => (stopped = true));
      await Promise.resolve();
      expect(stopped).toBe(false);
      release();
      await stopping;
      jest.advanceTimersByTime(60_000);
      expect(retry).toHaveBeenCalledTimes(1);
    } finally {
      jest.useRealTimers();
    }
  });
});
