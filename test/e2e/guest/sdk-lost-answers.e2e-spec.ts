import { GuestClient } from '../../../sdk/src/guest-client';
import { MemoryCookieJar } from '../../../sdk/src/cookie-jar';
import { MemorySecureStorage } from '../../../sdk/src/secure-storage';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Contract 13 against the real service: answers a flaky mobile network loses on the way back never
 * cost a native player the account. The service acted on each request; only the client missed it.
 */

const REFRESH_KEY = 'svc-auth:acme:cli_game:refresh_token';

/** A native game's client whose fetch goes through `through`. */
function nativeClient(w: GuestWorld, storage: MemorySecureStorage, through: typeof fetch): GuestClient {
  return new GuestClient({
    baseUrl: w.t.authOrigin,
    tenantId: 'acme',
    clientId: 'cli_game',
    storage,
    cookies: new MemoryCookieJar(),
    fetch: through,
    autoRefresh: false,
  });
}

/**
 * A fetch whose next call to a path ending in `suffix` (once `next` is set) reaches the service,
 * which acts on it, and then fails as a dropped connection would: the answer never arrives.
 */
function droppingAnswers(suffix: string): { next: boolean; fetch: typeof fetch } {
  const state = {
    next: false,
    fetch: (async (url: string, init: RequestInit) => {
      const res = await fetch(url, init);
      if (!state.next || !url.endsWith(suffix)) return res;
      state.next = false;
      throw new TypeError('network connection lost');
    }) as typeof fetch,
  };
  return state;
}

describe('the SDK after an answer lost on the way back', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => w.close());

  it('retries a refresh whose 200 body was cut off and is answered the successor the service made', async () => {
    let cut = false;
    let lost: { refresh_token: string } | undefined;
    const flaky = (async (url: string, init: RequestInit) => {
      const res = await fetch(url, init);
      if (!cut || !url.endsWith('/token')) return res;
      cut = false;
      lost = (await res.json()) as { refresh_token: string };
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"access_tok'));
          controller.error(new TypeError('network connection lost'));
        },
      });
      return new Response(body, { status: 200, headers: res.headers });
    }) as typeof fetch;
    const storage = new MemorySecureStorage();
    const c = nativeClient(w, storage, flaky);
    const created = await c.createGuest();
    const events: string[] = [];
    c.on('session', (change) => events.push(change.reason));
    cut = true;
    const renewed = await c.refresh();
    expect(renewed.refresh_token).toBe(lost?.refresh_token);
    expect(await storage.get(REFRESH_KEY)).toBe(lost?.refresh_token);
    // One rotation: the retry was answered under the reuse interval, not rotated again.
    expect(await w.t.redis.hget(`s:{${created.session_id}}`, 'gen')).toBe('1');
    await c.refresh();
    expect(c.sessionId).toBe(created.session_id);
    expect(events).toEqual([]);
  });

  it('creates the guest in a fresh flow when the answer that claimed the first one was lost', async () => {
    const dropped = droppingAnswers('/guest');
    dropped.next = true;
    const c = nativeClient(w, new MemorySecureStorage(), dropped.fetch);
    const first = c.browserFlowId;
    await expect(c.createGuest()).rejects.toMatchObject({ status: 0, code: 'network_error' });
    // The service created a guest and claimed the flow for a cookie the client never received.
    const claimed = await w.t.auth().post('/t/acme/guest').send({ client_id: 'cli_game', browser_flow_id: first });
    expect({ status: claimed.status, error: claimed.body.error }).toEqual({ status: 403, error: 'forbidden' });

    const created = await c.createGuest();
    expect(c.browserFlowId).not.toBe(first);
    // The fresh flow is the client's to go on with.
    await c.createLinkingIntent({ upgradeProofId: created.upgrade_proof.proof_id });
    const upgraded = await c.upgrade(await emailProof(w, c, `lost-answer-${Date.now()}@example.com`));
    expect(upgraded.user_id).toBe(created.user_id);
  });

  it('resolves an upgrade whose answer was lost with the replacement session the service made', async () => {
    const dropped = droppingAnswers('/guest/upgrade');
    const storage = new MemorySecureStorage();
    const c = nativeClient(w, storage, dropped.fetch);
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'lost-upgrade@example.com');
    dropped.next = true;
    const upgraded = await c.upgrade(proof);
    expect(upgraded).toMatchObject({
      user_id: created.user_id,
      linked_identity: { provider: 'email', provider_subject: 'lost-upgrade@example.com' },
    });
    expect(upgraded.session_id).not.toBe(created.session_id);
    expect(c.sessionId).toBe(upgraded.session_id);
    expect(await storage.get(REFRESH_KEY)).toBe(upgraded.refresh_token);
    expect((await c.me()).guest).toBe(false);
    await c.refresh();
    expect(c.sessionId).toBe(upgraded.session_id);
  });
});
