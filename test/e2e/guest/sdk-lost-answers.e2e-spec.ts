import { MemorySecureStorage, type SecureStorage } from '../../../sdk/src/secure-storage';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Contract 13 against the real service: answers a flaky mobile network loses on the way back never
 * cost a native player the account. The service acted on each request; only the client missed it.
 */

const REFRESH_KEY = 'svc-auth:acme:cli_game:refresh_token';

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
    const c = w.client({ storage, fetch: flaky });
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
    const c = w.client({ fetch: dropped.fetch });
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

  it('answers an email code sent again after its answer was lost with the same proof, while the proof is unspent', async () => {
    const dropped = droppingAnswers('/email/verify');
    const c = w.client({ fetch: dropped.fetch });
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const email = `verify-lost-${Date.now()}@example.com`;
    const after = w.t.smtp.messages.length;
    await c.startEmail(email);
    const code = await w.t.smtp.waitForCode(email, { after });
    dropped.next = true;
    await expect(c.verifyEmail(email, code)).rejects.toMatchObject({ status: 0, code: 'network_error' });
    // The player taps Verify again with the same code.
    const again = await c.verifyEmail(email, code);
    expect(again).toEqual({ proof_id: expect.stringMatching(/^prf_/), expires_in: expect.any(Number) });
    expect(again.expires_in).toBeGreaterThan(0);
    expect(again.expires_in).toBeLessThanOrEqual(300);
    // A newer code sent meanwhile loses none of its attempts to the repeat.
    await c.startEmail(email);
    expect(await c.verifyEmail(email, code)).toMatchObject({ proof_id: again.proof_id });
    expect(await w.t.redis.hget(`cc:acme:{${c.browserFlowId}}`, 'attempts')).toBe('0');
    // Only that code for that address: another address, or another code, is refused.
    await expect(c.verifyEmail(`other-${email}`, code)).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(c.verifyEmail(email, code === '000000' ? '000001' : '000000')).rejects.toMatchObject({
      code: 'invalid_code',
    });
    expect((await c.upgrade(again.proof_id)).user_id).toBe(created.user_id);
    // Spent by the upgrade, the proof is no answer any more.
    await expect(c.verifyEmail(email, code)).rejects.toMatchObject({ status: 400, code: 'invalid_code' });
  });

  it('resolves an upgrade whose answer was lost with the replacement session the service made', async () => {
    const dropped = droppingAnswers('/guest/upgrade');
    const storage = new MemorySecureStorage();
    const c = w.client({ storage, fetch: dropped.fetch });
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

  it('resolves a link whose answer was lost with the credential the service linked', async () => {
    const dropped = droppingAnswers('/me/identities');
    const c = w.client({ fetch: dropped.fetch });
    const created = await c.createGuest();
    await c.createLinkingIntent();
    await c.upgrade(await emailProof(w, c, 'lost-link-first@example.com'));
    await c.createAccountLinkingIntent();
    const proof = await emailProof(w, c, 'lost-link-second@example.com');
    dropped.next = true;
    // The proof was spent by the link the service made: asking again would only be refused.
    expect(await c.linkIdentity(proof)).toEqual({
      user_id: created.user_id,
      linked_identity: {
        provider: 'email',
        provider_subject: 'lost-link-second@example.com',
        email: 'lost-link-second@example.com',
      },
    });
  });

  it('resolves an account deletion whose answer was lost: the service no longer knows the player', async () => {
    const dropped = droppingAnswers('/me');
    const storage = new MemorySecureStorage();
    const c = w.client({ storage, fetch: dropped.fetch });
    const created = await c.createGuest();
    const events: string[] = [];
    c.on('user', (change) => events.push(change.reason));
    dropped.next = true;
    await c.deleteAccount();
    expect(events).toEqual(['deleted']);
    expect(await storage.get(REFRESH_KEY)).toBeNull();
    expect((await w.t.pg.query('SELECT 1 FROM users WHERE id = $1', [created.user_id])).rows).toEqual([]);
  });

  it('rejects a deletion that never reached the service, and the player is still there', async () => {
    let refuseNext = false;
    const unsent = (async (url: string, init: RequestInit) => {
      if (refuseNext && init.method === 'DELETE') {
        refuseNext = false;
        throw new TypeError('network connection lost');
      }
      return fetch(url, init);
    }) as typeof fetch;
    const c = w.client({ fetch: unsent });
    const created = await c.createGuest();
    refuseNext = true;
    await expect(c.deleteAccount()).rejects.toMatchObject({ status: 0 });
    expect(c.userId).toBe(created.user_id);
    expect((await c.me()).id).toBe(created.user_id);
  });

  it('rejects a link the service refused before its answer was lost, and links on the retry', async () => {
    const failing = {
      next: false,
      fetch: (async (url: string, init: RequestInit) => {
        if (failing.next && url.endsWith('/me/identities')) {
          failing.next = false;
          throw new TypeError('network connection lost');
        }
        return fetch(url, init);
      }) as typeof fetch,
    };
    const c = w.client({ fetch: failing.fetch });
    await c.createGuest();
    await c.createLinkingIntent();
    await c.upgrade(await emailProof(w, c, 'unsent-link-first@example.com'));
    await c.createAccountLinkingIntent();
    const proof = await emailProof(w, c, 'unsent-link-second@example.com');
    failing.next = true;
    // The request never reached the service: nothing was linked, so the call fails as it came.
    await expect(c.linkIdentity(proof)).rejects.toMatchObject({ status: 0 });
    expect((await c.linkIdentity(proof)).linked_identity.provider_subject).toBe('unsent-link-second@example.com');
  });
});

/**
 * A platform keystore whose app is killed after `writesLeft` more writes: what was written stays on
 * the device, the rest never happens. A restarted app reads the same store.
 */
class KilledAppStorage implements SecureStorage {
  private readonly disk = new Map<string, string>();
  writesLeft = Infinity;
  /** Writes the killed app never made. */
  refusedWrites = 0;

  get(key: string): Promise<string | null> {
    return Promise.resolve(this.disk.get(key) ?? null);
  }

  set(key: string, value: string): Promise<void> {
    if (this.writesLeft <= 0) {
      this.refusedWrites += 1;
      return Promise.reject(new Error('the app was killed'));
    }
    this.writesLeft -= 1;
    this.disk.set(key, value);
    return Promise.resolve();
  }

  delete(key: string): Promise<void> {
    this.disk.delete(key);
    return Promise.resolve();
  }
}

describe('the SDK when the app is killed while it keeps a rotated token', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    // A short reuse interval: the app comes back after it, as a player reopening the game does.
    w = await startGuestWorld({ RATE_LIMITS: 'off', REFRESH_REUSE_INTERVAL: '1' });
  });
  afterAll(async () => w.close());

  it('resumes with the rotated token when the app died after the first write of the token set', async () => {
    const store = new KilledAppStorage();
    const created = await w.client({ storage: store, fetch }).createGuest();
    // The service rotates; the app writes one entry of what it received and is killed. Whatever
    // the dying client would go on to do never happens: only what reached the store counts.
    store.writesLeft = 1;
    await w
      .client({ storage: store, fetch })
      .refresh()
      .catch(() => undefined);
    expect(store.refusedWrites).toBe(1);
    await new Promise((r) => setTimeout(r, 1_500));
    store.writesLeft = Infinity;
    const restarted = w.client({ storage: store, fetch });
    await restarted.refresh();
    expect(restarted.userId).toBe(created.user_id);
    expect(restarted.sessionId).toBe(created.session_id);
  });
});
