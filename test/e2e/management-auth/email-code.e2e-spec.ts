import { confirmCode, emailPost, requestCode, startFlow } from '../../support/management-flow';
import { startTestApp, type TestApp } from '../../support/test-app';

// @redis-cluster email-codes.store:ISSUE email-codes.store:rename rate-limiter:TAKE_ALL user-sessions:ADD

const wrong = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('management email codes: origin, flow cookie, attempts, lifetime', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe.each(['start', 'confirm'] as const)('%s', (path) => {
    const body = path === 'start' ? { email: 'o@studio.example' } : { email: 'o@studio.example', code: '123456' };

    it.each([
      ['missing', undefined],
      ['null', 'null'],
      ['another origin', 'https://evil.example'],
      ['another port', 'http://localhost:1'],
      ['the console origin', 'CONSOLE'],
      ['a trailing slash', 'AUTH/'],
    ])('refuses an Origin that is %s with 403 forbidden', async (_n, origin) => {
      const flow = await startFlow(t);
      let req = t.auth().post(`/management-auth/email/${path}`).set('Cookie', flow.cookie);
      if (origin !== undefined)
        req = req.set(
          'Origin',
          origin === 'CONSOLE' ? t.consoleOrigin : origin === 'AUTH/' ? `${t.authOrigin}/` : origin,
        );
      const res = await req.send({ flow_id: flow.flowId, ...body }).expect(403);
      expect(res.body).toEqual({ error: 'forbidden', error_description: expect.any(String) });
      expect(t.smtp.countFor('o@studio.example')).toBe(0);
    });

    it('refuses a missing flow cookie and the cookie of another flow', async () => {
      const flow = await startFlow(t);
      const other = await startFlow(t);
      await t
        .auth()
        .post(`/management-auth/email/${path}`)
        .set('Origin', t.authOrigin)
        .send({ flow_id: flow.flowId, ...body })
        .expect(403);
      await t
        .auth()
        .post(`/management-auth/email/${path}`)
        .set('Origin', t.authOrigin)
        .set('Cookie', other.cookie)
        .send({ flow_id: flow.flowId, ...body })
        .expect(403);
    });

    it('refuses a non-JSON body and unknown fields with 400 invalid_request', async () => {
      const flow = await startFlow(t);
      const form = await t
        .auth()
        .post(`/management-auth/email/${path}`)
        .set('Origin', t.authOrigin)
        .set('Cookie', flow.cookie)
        .type('form')
        .send({ flow_id: flow.flowId, ...body })
        .expect(400);
      expect(form.body.error).toBe('invalid_request');
      const extra = await emailPost(t, path, flow, { ...body, admin: true }).expect(400);
      expect(extra.body.error).toBe('invalid_request');
    });
  });

  it('answers 202 {expires_in: 600} for any address and keeps no code when validation fails', async () => {
    const flow = await startFlow(t);
    const res = await emailPost(t, 'start', flow, { email: 'someone-new@studio.example' }).expect(202);
    expect(res.body).toEqual({ expires_in: 600 });
    await emailPost(t, 'start', flow, { email: 'not-an-email' }).expect(400);
  });

  it('refuses an address with a quoted local part, a comment or an address literal, and mails nothing', async () => {
    // A quoted local part holding another address is valid RFC 5322, and mail libraries have read
    // it as that other address (nodemailer before 7.0.7): the code went to a mailbox the address
    // does not name, and the sign-in verified an address at a domain the sender never controlled.
    const flow = await startFlow(t);
    for (const email of [
      '"catcher@elsewhere.example x"@studio.example',
      '"someone"@studio.example',
      'someone(comment)@studio.example',
      'someone@[127.0.0.1]',
    ])
      await emailPost(t, 'start', flow, { email }).expect(400);
    expect(t.smtp.countFor('catcher@elsewhere.example')).toBe(0);
    await emailPost(t, 'start', flow, { email: "o'brien+games@studio.example" }).expect(202);
  });

  it('stores the code only as an HMAC', async () => {
    const flow = await startFlow(t);
    const code = await requestCode(t, flow, 'hmac@studio.example');
    const stored = await t.redis.hgetall(`cc:{${flow.flowId}}`);
    expect(Object.keys(stored).sort()).toEqual(['attempts', 'code', 'email', 'until']);
    expect(JSON.stringify(stored)).not.toContain(code);
    expect(JSON.stringify(stored)).not.toContain('hmac@studio.example');
    const ttl = await t.redis.ttl(`cc:{${flow.flowId}}`);
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
  });

  it('refuses the right code after five wrong attempts', async () => {
    const flow = await startFlow(t);
    const email = 'five@studio.example';
    const code = await requestCode(t, flow, email);
    for (let i = 0; i < 5; i++) {
      const res = await emailPost(t, 'confirm', flow, { email, code: wrong(code) }).expect(400);
      expect(res.body.error).toBe('invalid_code');
    }
    await emailPost(t, 'confirm', flow, { email, code }).expect(400);
  });

  it('accepts the right code after four wrong attempts', async () => {
    const flow = await startFlow(t);
    const email = 'four@studio.example';
    const code = await requestCode(t, flow, email);
    for (let i = 0; i < 4; i++) await emailPost(t, 'confirm', flow, { email, code: wrong(code) }).expect(400);
    await emailPost(t, 'confirm', flow, { email, code }).expect(200);
  });

  it('counts wrong guesses against their own flow only, never against the address (contract section 10)', async () => {
    const email = 'parallel@studio.example';
    const flows = await Promise.all([startFlow(t), startFlow(t), startFlow(t)]);
    const codes: string[] = [];
    for (const f of flows) codes.push(await requestCode(t, f, email));
    // Two flows for the address use up their codes' attempts...
    for (const i of [0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
      await emailPost(t, 'confirm', flows[i]!, { email, code: wrong(codes[i]!) }).expect(400);
    await emailPost(t, 'confirm', flows[0], { email, code: codes[0]! }).expect(400);
    // ...and the third flow's right code still works.
    await emailPost(t, 'confirm', flows[2], { email, code: codes[2]! }).expect(200);
  });

  it('refuses the code for another address than the one it was sent to', async () => {
    const flow = await startFlow(t);
    const code = await requestCode(t, flow, 'right@studio.example');
    await emailPost(t, 'confirm', flow, { email: 'wrong@studio.example', code }).expect(400);
    await emailPost(t, 'confirm', flow, { email: 'right@studio.example', code }).expect(200);
  });

  it('refuses a code of another flow', async () => {
    const a = await startFlow(t);
    const b = await startFlow(t);
    const codeA = await requestCode(t, a, 'cross@studio.example');
    await requestCode(t, b, 'cross@studio.example');
    await emailPost(t, 'confirm', b, { email: 'cross@studio.example', code: codeA }).expect((r) =>
      expect([400]).toContain(r.status),
    );
  });

  it('a new start for the same flow replaces the old code', async () => {
    const flow = await startFlow(t);
    const email = 'replace@studio.example';
    const first = await requestCode(t, flow, email);
    const second = await requestCode(t, flow, email);
    if (first !== second) await emailPost(t, 'confirm', flow, { email, code: first }).expect(400);
    await emailPost(t, 'confirm', flow, { email, code: second }).expect(200);
  });

  it('a code works once: the flow ends at the first confirm', async () => {
    const flow = await startFlow(t);
    const email = 'once@studio.example';
    const code = await requestCode(t, flow, email);
    await confirmCode(t, flow, email, code);
    const again = await emailPost(t, 'confirm', flow, { email, code });
    expect([400, 403]).toContain(again.status);
  });

  it('of 10 concurrent confirms with the right code exactly one succeeds', async () => {
    const flow = await startFlow(t);
    const email = 'race@studio.example';
    const code = await requestCode(t, flow, email);
    const results = await Promise.all(Array.from({ length: 10 }, () => emailPost(t, 'confirm', flow, { email, code })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.every((r) => r.status < 500)).toBe(true);
  });
});

describe('management email codes: expiry', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ EMAIL_CODE_TTL: '1', RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a code after its lifetime', async () => {
    const flow = await startFlow(t);
    const email = 'late@studio.example';
    const code = await requestCode(t, flow, email);
    // EMAIL_CODE_TTL=1: the code's key expires one second after it was issued, before its mail.
    await new Promise((r) => setTimeout(r, 1_200));
    const res = await emailPost(t, 'confirm', flow, { email, code }).expect(400);
    expect(res.body.error).toBe('invalid_code');
  });
});

describe('management email codes: no working mail transport', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 503 when SMTP refuses and keeps no code', async () => {
    const flow = await startFlow(t);
    t.smtp.setFailing(true);
    try {
      const res = await emailPost(t, 'start', flow, { email: 'down@studio.example' }).expect(503);
      expect(res.body.error).toBe('temporarily_unavailable');
      expect(await t.redis.exists(`cc:{${flow.flowId}}`)).toBe(0);
    } finally {
      t.smtp.setFailing(false);
    }
  });

  it('answers 503 when SMTP is unreachable', async () => {
    const down = await startTestApp({ SMTP_URL: 'smtp://127.0.0.1:9', RATE_LIMITS: 'off' });
    try {
      const flow = await startFlow(down);
      const res = await emailPost(down, 'start', flow, { email: 'x@studio.example' }).expect(503);
      expect(res.body.error).toBe('temporarily_unavailable');
      expect(await down.redis.exists(`cc:{${flow.flowId}}`)).toBe(0);
    } finally {
      await down.close();
    }
  });

  it.each([
    [
      'a field missing (another release)',
      (r: Record<string, unknown>) => JSON.stringify({ ...r, codeChallenge: undefined }),
    ],
    ['a field of another type', (r: Record<string, unknown>) => JSON.stringify({ ...r, scope: ['openid'] })],
    ['text that is not JSON', () => '{"clientId":'],
  ])('reads a flow record with %s as no flow: 403, no code sent', async (_n, rewrite) => {
    const flow = await startFlow(t);
    const key = `cf:{${flow.flowId}}`;
    const stored = JSON.parse((await t.redis.get(key)) ?? 'null') as Record<string, unknown>;
    await t.redis.set(key, rewrite(stored), 'EX', 600);
    await emailPost(t, 'start', flow, { email: 'shape@studio.example' }).expect(403);
    expect(t.smtp.countFor('shape@studio.example')).toBe(0);
  });

  it('answers 503 with no transport configured', async () => {
    const none = await startTestApp({ MAIL_TRANSPORT: 'none', RATE_LIMITS: 'off' });
    try {
      const flow = await startFlow(none);
      await emailPost(none, 'start', flow, { email: 'x@studio.example' }).expect(503);
    } finally {
      await none.close();
    }
  });
});
