import { confirmCode, emailPost, startFlow } from '../../support/management-flow';
import { PrivateRedis } from '../../support/private-redis';
import { untilRequestLogged } from '../../support/request-log';
import { startTestApp, type TestApp } from '../../support/test-app';

const codeOf = (text: string): string => /\b(\d{6})\b/.exec(text)?.[1] as string;

/**
 * What a code mail's fate does to the code (contract sections 1, 3, 8): a permanently refused
 * address is answered like a delivered one and keeps no code; an unreachable or failing server
 * is a 503 with no usable code, even when removing the code fails; no log names the address.
 */
describe('email codes and their mail', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off', LOG_LEVEL: 'debug' }, { logLines: lines });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a permanently refused address exactly like a deliverable one, keeps no code, logs no address', async () => {
    t.smtp.refuseRecipient('no-such-mailbox@studio.example');
    const refusedFlow = await startFlow(t);
    const refused = await emailPost(t, 'start', refusedFlow, { email: 'No-Such-Mailbox@studio.example' });
    const deliveredFlow = await startFlow(t);
    const delivered = await emailPost(t, 'start', deliveredFlow, { email: 'someone@studio.example' });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: delivered.status,
      body: delivered.body,
    });
    expect(refused.status).toBe(202);
    expect(await t.redis.exists(`cc:{${refusedFlow.flowId}}`, `cc:{${refusedFlow.flowId}}:unsent`)).toBe(0);
    expect(await t.redis.exists(`cc:{${deliveredFlow.flowId}}`)).toBe(1);
    await untilRequestLogged(lines, refused.headers['x-request-id'] as string);
    expect(lines.join('')).not.toContain('no-such-mailbox');
  });

  it('answers 503 when the server refuses for now, keeps no code and logs no address', async () => {
    const flow = await startFlow(t);
    t.smtp.setFailing(true);
    const refused = await Promise.resolve(
      emailPost(t, 'start', flow, { email: 'temporarily-away@studio.example' }).expect(503),
    ).finally(() => t.smtp.setFailing(false));
    expect(await t.redis.exists(`cc:{${flow.flowId}}`, `cc:{${flow.flowId}}:unsent`)).toBe(0);
    await untilRequestLogged(lines, refused.headers['x-request-id'] as string);
    expect(lines.join('')).not.toContain('temporarily-away');
  });
});

describe('an undelivered code whose removal fails', () => {
  let redis: PrivateRedis;
  let t: TestApp;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    t = await startTestApp({ RATE_LIMITS: 'off', REDIS_URL: redis.url });
  });
  afterAll(async () => {
    t.smtp.beforeFailingData = null;
    await t.close();
    await redis.stop();
  });

  it('is never usable: the mail failed after the server saw the code, and Redis refused the removal', async () => {
    const flow = await startFlow(t);
    let seen = '';
    t.smtp.beforeFailingData = async (message) => {
      seen = codeOf(message.text);
      // From here Redis refuses the service every deletion, so removing the code fails.
      await redis.serviceMay('-del', '-unlink');
    };
    try {
      await emailPost(t, 'start', flow, { email: 'undelivered@studio.example' }).expect(503);
    } finally {
      t.smtp.beforeFailingData = null;
      await redis.serviceMay();
    }
    expect(seen).toMatch(/^\d{6}$/);
    const res = await emailPost(t, 'confirm', flow, { email: 'undelivered@studio.example', code: seen }).expect(400);
    expect(res.body.error).toBe('invalid_code');
    // The flow still works with a code that was delivered.
    const after = t.smtp.messages.length;
    await emailPost(t, 'start', flow, { email: 'undelivered@studio.example' }).expect(202);
    const code = codeOf((await t.smtp.waitForMessage('undelivered@studio.example', { after })).text);
    await confirmCode(t, flow, 'undelivered@studio.example', code);
  });
});
