import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

const flowId = () => `flw_${Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')}`;

/** Issue 22, point 6: tenant email/start checks a flow's cookie before spending its send budget. */
describe('tenant email/start and a flow id without its cookie', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMIT_EMAIL_SEND_FLOW: '2/3600' });
  });
  afterAll(async () => {
    await w.close();
  });

  const start = (id: string, email: string, cookie?: string) => {
    const req = w.t.auth().post('/t/acme/email/start');
    if (cookie) req.set('Cookie', cookie);
    return req.send({ client_id: 'cli_game', browser_flow_id: id, email });
  };

  it('refuses the cookieless requests with 403 and leaves the holder its resends', async () => {
    const id = flowId();
    const first = await start(id, 'holder@example.com').expect(202);
    const cookie = ([] as string[]).concat(first.headers['set-cookie'] ?? [])[0]?.split(';')[0] as string;
    for (let i = 0; i < 3; i++) await start(id, 'holder@example.com').expect(403);
    await start(id, 'holder@example.com', cookie).expect(202);
  });
});
