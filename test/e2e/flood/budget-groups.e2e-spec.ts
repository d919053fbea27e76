import { RateLimiter, type RateLimitCheck } from '../../../src/platform/rate-limit/rate-limiter';
import { AppError } from '../../../src/errors/app-error';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * Budgets that share a slot are taken in one script, all or none: a refusal by one of them charges
 * none of the others, and their keys share a Redis Cluster hash slot (the cluster pass runs this too).
 */
describe('rate-limit budgets of one slot', () => {
  let t: TestApp;
  let limiter: RateLimiter;
  beforeAll(async () => {
    t = await startTestApp({});
    limiter = t.app.get(RateLimiter);
  });
  afterAll(async () => {
    await t.close();
  });

  const budget = (name: string, limit: number, subject: string, slot?: string): RateLimitCheck => ({
    name,
    domain: 'svc:test',
    subject,
    budget: { limit, windowSeconds: 60 },
    ...(slot === undefined ? {} : { slot }),
  });
  const refusal = async (...checks: RateLimitCheck[]): Promise<number | undefined> => {
    try {
      await limiter.hit(...checks);
      return undefined;
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      return (err as AppError).retryAfterSeconds;
    }
  };

  it('charges no budget of the group when one of them refuses', async () => {
    const wide = budget('group-wide', 3, 'net-1\0a', 'net-1');
    const narrow = budget('group-narrow', 1, 'net-1', 'net-1');
    expect(await refusal(wide, narrow)).toBeUndefined();
    expect(await refusal(wide, narrow)).toBeGreaterThan(0);
    expect(await refusal(wide, narrow)).toBeGreaterThan(0);
    // The two refusals took nothing from the wide budget: two of its three tokens are left.
    expect(await refusal(wide)).toBeUndefined();
    expect(await refusal(wide)).toBeUndefined();
    expect(await refusal(wide)).toBeGreaterThan(0);
  });

  it('keeps the budgets of one slot in one hash slot, and budgets without one apart', async () => {
    await limiter.hit(budget('slot-a', 5, 'net-2\0x', 'net-2'), budget('slot-b', 5, 'net-2', 'net-2'));
    await limiter.hit(budget('lone', 5, 'net-2'));
    const keys = await t.redisKeys();
    const tag = (name: string): string | undefined => {
      const key = keys.find((k) => k.includes(`rl:${name}:`));
      return key ? /\{([^}]+)\}/.exec(key)?.[1] : undefined;
    };
    expect(tag('slot-a')).toEqual(expect.any(String));
    expect(tag('slot-a')).toBe(tag('slot-b'));
    expect(tag('lone')).not.toBe(tag('slot-a'));
    for (const key of keys.filter((k) => k.includes('rl:'))) expect(key).not.toContain('net-2');
  });
});
