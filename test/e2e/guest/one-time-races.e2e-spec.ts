import { randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { GuestClient } from '../../../sdk/src/guest-client';
import {
  CONSOLE_COOKIE,
  consoleStart,
  setCookieLine,
  signInAtAuthHost,
  consoleCallback,
} from '../../support/console-flow';
import {
  emailProof,
  rawGuest,
  refreshGrant,
  startChat,
  startGuestWorld,
  type GuestWorld,
} from '../../support/guest-fixtures';

// @redis-cluster email-codes.store:ISSUE flow-records.store:CONSUME_FOR_UPGRADE user-sessions:ADD

/**
 * Promise (a) of the project: every one-time thing is consumed atomically, so of N concurrent
 * consumptions exactly one wins, the rest get the contract's error, and what is left afterwards is
 * consistent (one proof, one session, one user). Each test fires N requests at the real service.
 */
const N = 10;

const flowId = (): string => `flw_${randomBytes(18).toString('base64url')}`;
const cookieOf = (c: GuestClient): string => `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;
const outcome = (r: Response): string => `${r.status} ${(r.body as { error?: string }).error ?? ''}`.trim();
const countOf = (answers: string[], a: string): number => answers.filter((x) => x === a).length;

describe('one-time things under concurrent consumption', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  const proofKeys = async (flow: string): Promise<string[]> =>
    (await w.t.redisKeys()).filter((k) => k.startsWith(`g:{${flow}}:prf:`));
  const countRows = async (sql: string, params: unknown[] = []): Promise<number> =>
    (await w.t.pg.query(sql, params)).rows[0].n as number;

  it('tenant email code: 10 concurrent verifies with the right code make exactly one proof; a repeat answered after it gets that proof, the rest invalid_code', async () => {
    const c = w.client();
    await c.createGuest();
    // The intent first: a provisional user made before it could not be moved (spec 4.3 rule 6).
    await c.createLinkingIntent();
    const email = 'race-verify@example.com';
    const after = w.t.smtp.messages.length;
    await c.startEmail(email);
    const code = await w.t.smtp.waitForCode(email, { after });
    const before = await proofKeys(c.browserFlowId);

    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        w.t
          .auth()
          .post('/t/acme/email/verify')
          .set('Cookie', cookieOf(c))
          .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, email, code }),
      ),
    );
    const ok = answers.filter((r) => r.status === 200);
    // The same flow asking again once the code was answered is a retry of a lost answer: it gets
    // the one proof the code was spent for, never another.
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.body.proof_id as string)).size).toBe(1);
    expect(answers.filter((r) => r.status !== 200).map(outcome)).toEqual(Array(N - ok.length).fill('400 invalid_code'));
    // One proof more in the flow, and it works.
    expect((await proofKeys(c.browserFlowId)).length).toBe(before.length + 1);
    const upgraded = await c.upgrade(ok[0]?.body.proof_id as string);
    expect(upgraded.linked_identity).toMatchObject({ provider: 'email', email });
    expect(
      await countRows(`SELECT count(*)::int AS n FROM identities WHERE provider = 'email' AND user_id = $1`, [
        upgraded.user_id,
      ]),
    ).toBe(1);
  });

  it('browser flow claim: of 10 concurrent guest creations starting one flow exactly one claims it, the rest 403', async () => {
    const users = await countRows(`SELECT count(*)::int AS n FROM users WHERE tenant_id = 'acme'`);
    const flow = flowId();
    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        w.t.auth().post('/t/acme/guest').send({ client_id: 'cli_game', browser_flow_id: flow }),
      ),
    );
    const won = answers.filter((r) => r.status === 201);
    expect(won).toHaveLength(1);
    const lost = answers.filter((r) => r.status !== 201);
    expect(lost.map(outcome)).toEqual(Array(N - 1).fill('403 forbidden'));
    for (const r of lost) {
      expect(r.body.access_token).toBeUndefined();
      expect(r.headers['set-cookie']).toBeUndefined();
    }
    expect(setCookieLine(won[0] as Response, `__Host-svc_flow_${flow}`)).toBeDefined();
    // One guest, one session.
    expect(await countRows(`SELECT count(*)::int AS n FROM users WHERE tenant_id = 'acme'`)).toBe(users + 1);
    expect(await countRows(`SELECT count(*)::int AS n FROM sessions WHERE user_id = $1`, [won[0]?.body.user_id])).toBe(
      1,
    );
  });

  it('a guest’s upgrade proof: of 10 concurrent linking intents presenting it exactly one is accepted, the rest invalid_proof', async () => {
    const c = w.client();
    const created = await c.createGuest();
    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        w.t
          .auth()
          .post('/t/acme/guest/linking-intent')
          .set('Authorization', `Bearer ${created.access_token}`)
          .set('Cookie', cookieOf(c))
          .send({
            client_id: 'cli_game',
            browser_flow_id: c.browserFlowId,
            upgrade_proof_id: created.upgrade_proof.proof_id,
          }),
      ),
    );
    const ok = answers.filter((r) => r.status === 200 || r.status === 201);
    expect(ok).toHaveLength(1);
    expect(answers.filter((r) => r.status >= 300).map(outcome)).toEqual(Array(N - 1).fill('400 invalid_proof'));
    // The proof is gone; the one intent of the flow is the winner's.
    expect(await proofKeys(c.browserFlowId)).toEqual([]);
    const intent = JSON.parse((await w.t.redis.get(`g:{${c.browserFlowId}}:intent`)) as string) as {
      intentId: string;
    };
    expect(intent.intentId).toBe(ok[0]?.body.intent_id);
  });

  it('linking intent of a flow: of 10 guests racing for it exactly one holds it, the rest intent_conflict', async () => {
    const owner = w.client();
    await owner.createGuest();
    const guests = await Promise.all(Array.from({ length: N }, () => rawGuest(w)));
    const answers = await Promise.all(
      guests.map((g) =>
        w.t
          .auth()
          .post('/t/acme/guest/linking-intent')
          .set('Authorization', `Bearer ${g.access}`)
          .set('Cookie', cookieOf(owner))
          .send({ client_id: 'cli_game', browser_flow_id: owner.browserFlowId }),
      ),
    );
    expect(answers.map((r) => r.status).filter((s) => s === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status !== 201).map(outcome)).toEqual(Array(N - 1).fill('409 intent_conflict'));
    const winner = guests[answers.findIndex((r) => r.status === 201)];
    const intent = JSON.parse((await w.t.redis.get(`g:{${owner.browserFlowId}}:intent`)) as string) as {
      sessionId: string;
    };
    expect(intent.sessionId).toBe(winner?.sessionId);
  });

  it('linking intent and provider proof: of 10 concurrent upgrades exactly one attaches, the rest invalid_proof', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'race-upgrade@example.com');
    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        w.t
          .auth()
          .post('/t/acme/guest/upgrade')
          .set('Authorization', `Bearer ${created.access_token}`)
          .set('Cookie', cookieOf(c))
          .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof }),
      ),
    );
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(answers.filter((r) => r.status !== 200).map(outcome)).toEqual(Array(N - 1).fill('400 invalid_proof'));
    expect(await countRows(`SELECT count(*)::int AS n FROM identities WHERE user_id = $1`, [created.user_id])).toBe(1);
    expect(
      await countRows(`SELECT count(*)::int AS n FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, [
        created.user_id,
      ]),
    ).toBe(1);
  });

  describe('the chat platform', () => {
    const chatUser = () => ({ id: String(7_000_000 + Math.floor(Math.random() * 1e6)), username: 'racer' });

    it('state: of 10 concurrent callbacks with one state exactly one proves, the rest 400 invalid_request', async () => {
      const c = w.client();
      await c.createGuest();
      const { to, state } = await startChat(w, c);
      const code = w.chat.registerUser(chatUser(), to.toString());
      const before = await proofKeys(c.browserFlowId);
      const answers = await Promise.all(
        Array.from({ length: N }, () =>
          w.t.auth().get('/t/acme/chat/callback').query({ code, state }).set('Cookie', cookieOf(c)),
        ),
      );
      const won = answers.filter((r) => r.status === 302);
      expect(won).toHaveLength(1);
      expect(answers.filter((r) => r.status !== 302).map(outcome)).toEqual(Array(N - 1).fill('400 invalid_request'));
      expect(GuestClient.chatRedirectResult(won[0]?.headers.location as string).proof_id).toMatch(/^prf_/);
      expect(await proofKeys(c.browserFlowId)).toHaveLength(before.length + 1);
    });

    it('the one-time go link: of 10 concurrent follows exactly one reaches the platform, the rest 400', async () => {
      const c = w.client();
      await c.createGuest();
      const authorizeUrl = await c.chatAuthorizeUrl();
      const link = new URL(authorizeUrl);
      const states = async () => (await w.t.redisKeys()).filter((k) => k.startsWith('gcs:')).length;
      const before = await states();
      const answers = await Promise.all(Array.from({ length: N }, () => w.t.auth().get(link.pathname + link.search)));
      const won = answers.filter((r) => r.status === 302);
      expect(won).toHaveLength(1);
      expect(new URL(won[0]?.headers.location as string).origin).toBe(new URL(w.chat.authorizeUrl).origin);
      expect(answers.filter((r) => r.status !== 302).map(outcome)).toEqual(Array(N - 1).fill('400 invalid_request'));
      for (const r of answers.filter((x) => x.status !== 302)) expect(r.headers['set-cookie']).toBeUndefined();
      // One state minted, for the one browser that followed the link first.
      expect(await states()).toBe(before + 1);
    });
  });

  it('take-over note: the replaced guest token racing the replacement’s own token never leaves two live lineages', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const upgraded = await c.upgrade(await emailProof(w, c, 'race-takeover@example.com'));
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        refreshGrant(w, (i % 2 === 0 ? created.refresh_token : upgraded.refresh_token) as string),
      ),
    );
    expect(answers.map((r) => r.status).every((s) => s === 200 || s === 400)).toBe(true);
    for (const r of answers.filter((x) => x.status === 400)) expect(r.body.error).toBe('invalid_grant');
    const successors = new Set(answers.filter((r) => r.status === 200).map((r) => r.body.refresh_token as string));
    // Exactly one lineage won, or a replay ended the session for both holders.
    expect(successors.size).toBeLessThanOrEqual(1);
    const [successor] = [...successors];
    const live = (await w.t.redis.exists(`s:{${upgraded.session_id}}`)) === 1;
    if (successor !== undefined && live) {
      const next = await refreshGrant(w, successor).expect(200);
      expect(next.body.session_id).toBe(upgraded.session_id);
    } else if (successor !== undefined) {
      expect((await refreshGrant(w, successor).expect(400)).body.error).toBe('invalid_grant');
    }
    // Whatever happened, the guest's token never works again once the race is over.
    expect((await refreshGrant(w, created.refresh_token as string)).status).toBe(400);
  });

  it('console BFF pending sign-in: of 10 concurrent callbacks exactly one signs in, the rest invalid_state', async () => {
    const start = await consoleStart(w.t);
    const redirectTo = await signInAtAuthHost(w.t, start.authorizeUrl, 'race-console@studio.example');
    const consoleSessions = async () => (await w.t.redisKeys()).filter((k) => k.startsWith('cs:')).length;
    const controlSessions = () =>
      countRows(`SELECT count(*)::int AS n FROM sessions WHERE tenant_id = 'control-plane' AND revoked_at IS NULL`);
    const before = { console: await consoleSessions(), control: await controlSessions() };
    const answers = await Promise.all(
      Array.from({ length: N }, () => consoleCallback(w.t, redirectTo, start.flowCookie)),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(N).fill(303));
    const won = answers.filter((r) => r.headers.location === '/');
    expect(won).toHaveLength(1);
    expect(setCookieLine(won[0] as Response, CONSOLE_COOKIE)).toMatch(/^__Host-svc_console=[^;]+;/);
    const lost = answers.filter((r) => r.headers.location !== '/');
    expect(lost.map((r) => r.headers.location)).toEqual(Array(N - 1).fill('/?error=invalid_state'));
    for (const r of lost) expect(setCookieLine(r, CONSOLE_COOKIE) ?? '').not.toMatch(/^__Host-svc_console=[^;]+;/);
    // One console session, backed by one live control-plane session: the code was exchanged once.
    expect({ console: await consoleSessions(), control: await controlSessions() }).toEqual({
      console: before.console + 1,
      control: before.control + 1,
    });
  });
});

describe('customer refresh tokens with the strict rule (REFRESH_REUSE_INTERVAL=0)', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off', REFRESH_REUSE_INTERVAL: '0' });
  });
  afterAll(async () => {
    await w.close();
  });

  it('of 10 concurrent refreshes with one token exactly one succeeds, the rest invalid_grant', async () => {
    const g = await rawGuest(w);
    const answers = await Promise.all(Array.from({ length: N }, () => refreshGrant(w, g.refresh)));
    const out = answers.map(outcome);
    expect(countOf(out, '200')).toBe(1);
    expect(countOf(out, '400 invalid_grant')).toBe(N - 1);
    // The replays revoke the session (the strict rule), so the winner's token is refused as well.
    const winner = answers.find((r) => r.status === 200);
    expect((await refreshGrant(w, winner?.body.refresh_token as string)).status).toBe(400);
  });
});
