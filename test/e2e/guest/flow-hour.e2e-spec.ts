import { FLOW_LIFETIME_MS } from '../../../sdk/src/flow-clock';
import { MemoryCookieJar } from '../../../sdk/src/cookie-jar';
import type { GuestClient } from '../../../sdk/src/guest-client';
import { MemorySecureStorage } from '../../../sdk/src/secure-storage';
import { chatProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * A browser flow lives an hour from its first call (contract 6) and a page open longer keeps its
 * flow id, so the steps of a linking begun near the hour's end would be refused at the next one
 * (403 "Unknown browser flow."), the code and intent lost. The SDK begins each new linking or
 * sign-in in a fresh flow once the flow is past half its hour with nothing of the page's live in
 * it. The page's knowledge of its flow is in the tab's sessionStorage (a reload keeps the flow id
 * and it); the flow's age is moved back there, and the flow's record in Redis is given the few
 * seconds such a flow has left.
 */
describe('a page’s steps never outlast its browser flow', () => {
  let w: GuestWorld;
  const tab = new Map<string, string>();
  beforeAll(async () => {
    (globalThis as { sessionStorage?: unknown }).sessionStorage = {
      getItem: (k: string) => tab.get(k) ?? null,
      setItem: (k: string, v: string) => void tab.set(k, v),
    };
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    delete (globalThis as { sessionStorage?: unknown }).sessionStorage;
    await w.close();
  });

  const clockKey = 'svc-auth:acme:cli_game:flow';

  /** The page has been open `minutes` since its flow began, which has `secondsLeft` of its hour. */
  async function playedFor(c: GuestClient, minutes: number, secondsLeft: number): Promise<void> {
    const times = JSON.parse(tab.get(clockKey) as string) as { id: string; startedAt: number };
    expect(times.id).toBe(c.browserFlowId);
    tab.set(clockKey, JSON.stringify({ ...times, startedAt: times.startedAt - minutes * 60_000 }));
    await w.t.redis.pexpire(`gf:{${c.browserFlowId}}`, secondsLeft * 1000);
  }

  async function codeFor(c: GuestClient, email: string): Promise<string> {
    const after = w.t.smtp.messages.length;
    await c.startEmail(email);
    return w.t.smtp.waitForCode(email, { after });
  }

  const afterFlowEnds = () => new Promise((r) => setTimeout(r, 2_500));

  it('begins a linking late in the flow’s hour in a fresh flow, so the code still verifies after the old flow ends', async () => {
    const c = w.client();
    const created = await c.createGuest();
    const firstFlow = c.browserFlowId;
    await playedFor(c, 58, 2);
    await c.createLinkingIntent();
    expect(c.browserFlowId).not.toBe(firstFlow);
    const email = `late-${Date.now()}@example.com`;
    const code = await codeFor(c, email);
    await afterFlowEnds();
    const { proof_id } = await c.verifyEmail(email, code);
    expect((await c.upgrade(proof_id)).user_id).toBe(created.user_id);
  });

  it('knows the flow’s age after a reload that keeps the flow id', async () => {
    const browser = { cookies: new MemoryCookieJar(), storage: new MemorySecureStorage() };
    const before = w.client(browser);
    const created = await before.createGuest();
    await playedFor(before, 45, 2);
    // The reloaded page: the flow id the game kept, the browser's cookies and storage.
    const c = w.client({ ...browser, browserFlowId: before.browserFlowId });
    await c.createLinkingIntent();
    expect(c.browserFlowId).not.toBe(before.browserFlowId);
    const email = `reloaded-${Date.now()}@example.com`;
    const code = await codeFor(c, email);
    await afterFlowEnds();
    expect((await c.upgrade((await c.verifyEmail(email, code)).proof_id)).user_id).toBe(created.user_id);
  });

  it('keeps the flow a chat sign-in left from while its proof may live, so a lapsed intent renewed there still upgrades', async () => {
    const browser = { cookies: new MemoryCookieJar(), storage: new MemorySecureStorage() };
    const c = w.client(browser);
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const flow = c.browserFlowId;
    const proofId = await chatProof(w, c, { id: String(7_300_000 + (Date.now() % 100_000)), username: 'slow' });
    // The player spent twelve minutes at the platform in a tab open for fifty: the intent lapsed
    // (its ten minutes), the proof has not (it came back a moment ago).
    const times = JSON.parse(tab.get(clockKey) as string) as { startedAt: number; holdsUntil: number };
    tab.set(
      clockKey,
      JSON.stringify({
        ...times,
        startedAt: times.startedAt - 50 * 60_000,
        holdsUntil: times.holdsUntil - 12 * 60_000,
      }),
    );
    await w.t.redis.del(`g:{${flow}}:intent`);
    const reloaded = w.client({ ...browser, browserFlowId: flow });
    await reloaded.createLinkingIntent();
    expect(reloaded.browserFlowId).toBe(flow);
    expect((await reloaded.upgrade(proofId)).user_id).toBe(created.user_id);
  });

  it('keeps a flow past half its hour while it holds the page’s live intent, and a young flow always', async () => {
    const c = w.client();
    await c.createGuest();
    const flow = c.browserFlowId;
    await c.createLinkingIntent();
    await playedFor(c, 40, 600);
    const email = `kept-${Date.now()}@example.com`;
    await codeFor(c, email);
    expect(c.browserFlowId).toBe(flow);

    const young = w.client();
    await young.createGuest();
    await playedFor(young, FLOW_LIFETIME_MS / 2 / 60_000 - 1, 600);
    const youngFlow = young.browserFlowId;
    await young.createLinkingIntent();
    expect(young.browserFlowId).toBe(youngFlow);
  });
});
