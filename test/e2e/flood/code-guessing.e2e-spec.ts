import { randomBytes } from 'node:crypto';
import { emailGuessBound } from '../../../src/platform/email-codes/email-code-budgets';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { emailPost, startFlow } from '../../support/management-flow';

/**
 * Guessing an address's codes under the production defaults (contract section 10, OWASP ASVS
 * V2.2.1: at most 100 wrong guesses an hour per address). An attacker with as many networks and
 * flows as they like, resending in every flow as often as it may, gets EMAIL_CODE_MAX_ATTEMPTS
 * guesses per fresh code the per-address budget lets through, and not one more from resends;
 * emailGuessBound turns that into the hourly bound (test/unit/email-guess-bound.spec.ts).
 */
describe('email-code guessing under the production defaults', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ TRUST_PROXY: 'true' });
  });
  afterAll(async () => {
    await w.close();
  });

  const address = (): string => `target-${randomBytes(4).toString('hex')}@studio.example`;
  const wrongFor = (code: string): string => (code === '000000' ? '000001' : '000000');
  let network = 0;
  /** A network of its own for every request: per-network budgets never stop this attacker. */
  const nextNetwork = (): string => `198.18.${Math.floor(network / 250)}.${(network++ % 250) + 1}`;

  interface Realm {
    readonly label: string;
    /** Starts a flow and sends its first code; the status of that send and a way to go on. */
    open(email: string): Promise<{ status: number; code?: string; flow: RealmFlow }>;
  }
  interface RealmFlow {
    send(): Promise<{ status: number; code?: string }>;
    guess(code: string): Promise<number>;
  }

  const realms: Realm[] = [
    {
      label: 'tenant email verification',
      async open(email) {
        const flowId = `flw_${randomBytes(16).toString('base64url')}`;
        let cookie: string | undefined;
        const post = (path: 'start' | 'verify', body: Record<string, unknown>) => {
          const req = w.t
            .auth()
            .post(`/t/acme/email/${path}`)
            .set('X-Forwarded-For', nextNetwork())
            .send({ client_id: 'cli_game', browser_flow_id: flowId, email, ...body });
          return cookie ? req.set('Cookie', cookie) : req;
        };
        const flow: RealmFlow = {
          async send() {
            const after = w.t.smtp.messages.length;
            const res = await post('start', {});
            if (res.status !== 202) return { status: res.status };
            const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
            cookie ??= set.find((c) => c.startsWith(`__Host-svc_flow_${flowId}=`))?.split(';')[0];
            return { status: 202, code: await w.t.smtp.waitForCode(email, { after }) };
          },
          guess: async (code) => (await post('verify', { code })).status,
        };
        return { ...(await flow.send()), flow };
      },
    },
    {
      label: 'console sign-in',
      async open(email) {
        const started = await startFlow(w.t);
        const flow: RealmFlow = {
          async send() {
            const after = w.t.smtp.messages.length;
            const res = await emailPost(w.t, 'start', started, { email }).set('X-Forwarded-For', nextNetwork());
            if (res.status !== 202) return { status: res.status };
            return { status: 202, code: await w.t.smtp.waitForCode(email, { after }) };
          },
          guess: async (code) =>
            (await emailPost(w.t, 'confirm', started, { email, code }).set('X-Forwarded-For', nextNetwork())).status,
        };
        return { ...(await flow.send()), flow };
      },
    },
  ];

  it.each(realms)('$label: a resend keeps the attempt count of its flow', async (realm) => {
    const email = address();
    const { code: first, flow } = await realm.open(email);
    for (let i = 0; i < 4; i++) expect(await flow.guess(wrongFor(first ?? ''))).toBe(400);
    const second = await flow.send();
    expect(second.status).toBe(202);
    expect(await flow.guess(wrongFor(second.code ?? ''))).toBe(400);
    // Five attempts in all: the right code of the resend is the sixth, and fails.
    expect(await flow.guess(second.code ?? '')).toBe(400);
  });

  it.each(realms)('$label: the whole burst gets 5 guesses per fresh code the address budget allows', async (realm) => {
    const { limit } = w.t.config.rateLimits.emailSendAddress;
    const attempts = w.t.config.ttl.emailCodeMaxAttempts;
    const email = address();
    let fresh = 0;
    for (let i = 0; i < limit + 3; i++) {
      const opened = await realm.open(email);
      if (opened.status === 429) continue;
      expect(opened.status).toBe(202);
      fresh += 1;
      // Every resend the flow may make, a wrong guess after each; then wrong guesses up to the
      // code's attempts. The right code failing then shows no resend bought another guess.
      const flow = opened.flow;
      let last = opened.code ?? '';
      let guesses = 0;
      const guessWrong = async () => {
        expect(await flow.guess(wrongFor(last))).toBe(400);
        guesses += 1;
      };
      await guessWrong();
      for (let sent = await flow.send(); sent.status === 202; sent = await flow.send()) {
        last = sent.code ?? '';
        await guessWrong();
      }
      while (guesses < attempts) await guessWrong();
      expect(await flow.guess(last)).toBe(400);
    }
    expect(fresh).toBe(limit);
    // A burst from a full bucket is 5 guesses per fresh code; the hourly bound adds the refill.
    expect(emailGuessBound(w.t.config)).toBeLessThanOrEqual(100);
  });
});
