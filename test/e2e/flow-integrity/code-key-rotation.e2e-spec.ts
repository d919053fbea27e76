import { randomBytes } from 'node:crypto';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { emailPost, startFlow } from '../../support/management-flow';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * Contract section 12: PRIVACY_KEY is a list whose first key makes new digests and whose every
 * key verifies. A code sent under key A is still accepted once the deployment runs with `B,A`,
 * and a budget spent under A is still spent: a rotation neither signs anyone out nor starts
 * anyone's budget afresh.
 */
describe('email codes and budgets across a PRIVACY_KEY rotation', () => {
  let w: GuestWorld;
  let rotated: TestApp;
  const CLIENT_NET = '198.51.100.40';
  beforeAll(async () => {
    w = await startGuestWorld({ TRUST_PROXY: 'true', RATE_LIMIT_IP_GUEST_CREATE: '2/3600' });
  });
  afterAll(async () => {
    await rotated?.close();
    await w.close();
  });

  const flowId = (): string => `flw_${randomBytes(16).toString('base64url')}`;
  const rotate = async (): Promise<TestApp> => {
    const fresh = randomBytes(32).toString('base64url');
    const current = w.t.env.PRIVACY_KEY ?? '';
    return startTestApp({ PRIVACY_KEY: `${fresh},${current}` }, { shareWith: w.t });
  };

  it('accepts codes sent under the old key, and keeps budgets spent under it', async () => {
    const email = `rotation-${randomBytes(4).toString('hex')}@studio.example`;
    // Under key A: a tenant code, a console sign-in code, and a spent per-network budget.
    const tenantFlow = flowId();
    let after = w.t.smtp.messages.length;
    const started = await w.t
      .auth()
      .post('/t/acme/email/start')
      .set('X-Forwarded-For', CLIENT_NET)
      .send({ client_id: 'cli_game', browser_flow_id: tenantFlow, email })
      .expect(202);
    const cookie = ([] as string[])
      .concat(started.headers['set-cookie'] ?? [])
      .find((c) => c.startsWith(`__Host-svc_flow_${tenantFlow}=`))
      ?.split(';')[0];
    const tenantCode = await w.t.smtp.waitForCode(email, { after });
    const consoleFlow = await startFlow(w.t);
    after = w.t.smtp.messages.length;
    await emailPost(w.t, 'start', consoleFlow, { email }).expect(202);
    const consoleCode = await w.t.smtp.waitForCode(email, { after });
    for (let i = 0; i < 2; i++)
      await w.t
        .auth()
        .post('/t/acme/guest')
        .set('X-Forwarded-For', CLIENT_NET)
        .send({ client_id: 'cli_game', browser_flow_id: flowId() })
        .expect(201);

    // The deployment restarts with B,A.
    rotated = await rotate();
    const verified = await rotated
      .auth()
      .post('/t/acme/email/verify')
      .set('X-Forwarded-For', CLIENT_NET)
      .set('Cookie', cookie ?? '')
      .send({ client_id: 'cli_game', browser_flow_id: tenantFlow, email, code: tenantCode });
    expect(verified.status).toBe(200);
    expect(verified.body.proof_id).toMatch(/^prf_/);
    await emailPost(rotated, 'confirm', consoleFlow, { email, code: consoleCode }).expect(200);
    const guest = await rotated
      .auth()
      .post('/t/acme/guest')
      .set('X-Forwarded-For', CLIENT_NET)
      .send({ client_id: 'cli_game', browser_flow_id: flowId() });
    expect(guest.status).toBe(429);
  });
});
