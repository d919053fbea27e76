import { createHmac } from 'node:crypto';
import { emailPost, startFlow } from '../../support/management-flow';
import { startTestApp, type TestApp } from '../../support/test-app';

// @redis-cluster rate-limiter:TAKE_ALL

/** Spec section 8: email-send, IP and per-flow budgets, atomic in Redis, over pseudonymised subjects. */
describe('management sign-in rate limits', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  function expectLimited(res: { status: number; headers: Record<string, string>; body: { error?: string } }): void {
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
  }

  it('limits codes sent to one address, across flows, and sends nothing past the budget', async () => {
    t = await startTestApp({ RATE_LIMIT_MGMT_EMAIL_SEND: '2/60' });
    const email = 'budget@studio.example';
    for (let i = 0; i < 2; i++) await emailPost(t, 'start', await startFlow(t), { email }).expect(202);
    expectLimited(await emailPost(t, 'start', await startFlow(t), { email }));
    // Another address still gets its code; once it has arrived, a refused send would have too.
    await emailPost(t, 'start', await startFlow(t), { email: 'other@studio.example' }).expect(202);
    await t.smtp.waitForMessage('other@studio.example');
    expect(t.smtp.countFor(email)).toBe(2);
  });

  it('limits requests per client IP', async () => {
    t = await startTestApp({ RATE_LIMIT_MGMT_IP: '3/60' });
    const flow = await startFlow(t);
    for (let i = 0; i < 3; i++)
      await emailPost(t, 'confirm', flow, { email: 'ip@studio.example', code: '000000' }).expect(400);
    expectLimited(await emailPost(t, 'confirm', flow, { email: 'ip@studio.example', code: '000000' }));
    expectLimited(await emailPost(t, 'start', await startFlow(t), { email: 'ip2@studio.example' }));
  });

  it('limits attempts per flow', async () => {
    t = await startTestApp({ RATE_LIMIT_MGMT_FLOW_ATTEMPTS: '2/60' });
    const flow = await startFlow(t);
    await emailPost(t, 'start', flow, { email: 'flow@studio.example' }).expect(202);
    await emailPost(t, 'confirm', flow, { email: 'flow@studio.example', code: '000000' }).expect(400);
    expectLimited(await emailPost(t, 'confirm', flow, { email: 'flow@studio.example', code: '000000' }));
    // Another flow has its own budget.
    await emailPost(t, 'start', await startFlow(t), { email: 'flow2@studio.example' }).expect(202);
  });

  it('counts atomically: of 20 concurrent sends to one address exactly the budget passes', async () => {
    t = await startTestApp({ RATE_LIMIT_MGMT_EMAIL_SEND: '3/60' });
    const flows = await Promise.all(Array.from({ length: 20 }, () => startFlow(t)));
    const results = await Promise.all(flows.map((f) => emailPost(t, 'start', f, { email: 'burst@studio.example' })));
    expect(results.filter((r) => r.status === 202)).toHaveLength(3);
    expect(results.filter((r) => r.status === 429)).toHaveLength(17);
  });

  it('keys counters by HMAC pseudonyms under the management domain, never by raw address or IP', async () => {
    t = await startTestApp({});
    const flow = await startFlow(t);
    await emailPost(t, 'start', flow, { email: 'pseudo@studio.example' }).expect(202);
    const keys = await t.redisKeys();
    const limiterKeys = keys.filter((k) => k.includes('rl:'));
    expect(limiterKeys.length).toBeGreaterThanOrEqual(3);
    // Spec 8: the management budgets' own domain separator, so no tenant's digest of the same
    // subject matches them.
    const mac = (name: string, subject: string) =>
      createHmac('sha256', t.config.privacyKeys[0] as Buffer)
        .update(`svc:management:rate-limit:${name}\0${subject}`)
        .digest('base64url');
    expect(limiterKeys).toContain(`rl:mgmt-flow:{${mac('mgmt-flow', flow.flowId)}}`);
    for (const k of keys) {
      expect(k).not.toContain('pseudo@studio.example');
      expect(k).not.toMatch(/127\.0\.0\.1|::1|::ffff/);
    }
  });
});
