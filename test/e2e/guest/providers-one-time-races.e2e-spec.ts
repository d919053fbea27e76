import type { Response } from 'supertest';
import { GuestClient } from '../../../sdk/src/guest-client';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { TestBrowser } from '../../support/oidc-issuer';
import { startProviders, type ProviderWorld } from '../../support/provider-fixtures';

/**
 * Promise (a) for the identity providers' one-time bounce (contract 14, `GET providers/go`), as
 * one-time-races has it for the chat platform's: of N concurrent follows of one page's link exactly
 * one goes on to the provider with a binding cookie and a state, the rest are refused and mint
 * nothing; and only the winner's browser can finish the flow.
 */
const N = 10;

const outcome = (r: Response): string => `${r.status} ${(r.body as { error?: string }).error ?? ''}`.trim();

describe('the identity provider’s one-time go link under concurrent follows', () => {
  let w: GuestWorld;
  let p: ProviderWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    p = await startProviders(w);
  });
  afterAll(async () => {
    await p.stop();
    await w.close();
  });

  it('of 10 concurrent follows exactly one reaches the provider, the rest 400 invalid_request with no cookie', async () => {
    const c = w.client();
    await c.createGuest();
    const link = new URL(await c.providerAuthorizeUrl('google'));
    expect(link.pathname).toBe('/t/acme/providers/go');
    const states = async () => (await w.t.redisKeys()).filter((k) => k.startsWith('gps:')).length;
    const before = await states();

    const answers = await Promise.all(Array.from({ length: N }, () => w.t.auth().get(link.pathname + link.search)));

    const won = answers.filter((r) => r.status === 302);
    expect(won).toHaveLength(1);
    const winner = won[0] as Response;
    const to = new URL(winner.headers.location as string);
    expect(`${to.origin}${to.pathname}`).toBe(`${p.plain.issuer}/auth`);
    const binding = ([] as string[]).concat(winner.headers['set-cookie'] ?? []);
    expect(binding).toEqual([expect.stringMatching(/^__Host-svc_idp_[A-Za-z0-9_-]+=[^;]+;/)]);
    const refused = answers.filter((r) => r.status !== 302);
    expect(refused.map(outcome)).toEqual(Array(N - 1).fill('400 invalid_request'));
    for (const r of refused) expect(r.headers['set-cookie']).toBeUndefined();
    // One state minted, for the one browser that followed the link first.
    expect(await states()).toBe(before + 1);

    // Only the winner's browser finishes the flow: its binding cookie goes with the callback.
    await p.plain.setAccount({ sub: 'go-race-1' });
    const callback = new URL(await new TestBrowser(['127.0.0.1']).navigate(to.toString()));
    expect(callback.pathname).toBe('/t/acme/providers/callback');
    const cookie = (binding[0] as string).split(';')[0] as string;
    const back = await w.t
      .auth()
      .get(callback.pathname + callback.search)
      .set('Cookie', cookie)
      .expect(302);
    const proof = GuestClient.providerRedirectResult(back.headers.location as string);
    expect(proof.proof_id).toMatch(/^prf_/);
    expect((await c.signIn(proof.proof_id)).user_id).toMatch(/^usr_/);
  });
});
