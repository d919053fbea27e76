import { consoleSignIn } from '../../support/console-flow';
import { addMember, createTenant, emailUserId } from '../../support/console-fixtures';
import { UpstreamSwitch } from '../../support/console-upstream';
import { untilRequestLogged } from '../../support/request-log';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * The BFF's own lines about a proxied call hold what the request's line holds (docs/operations.md,
 * Logs): the path without its query, so never the address a player search carries (`users?q=`).
 */
describe('console BFF: log lines of proxied calls', () => {
  let sw: UpstreamSwitch;
  let t: TestApp;
  const lines: string[] = [];
  const address = 'looked.up.player@example.com';
  beforeAll(async () => {
    // Every call of the BFF to the API passes the switch: AUTH_ORIGIN names it.
    sw = await UpstreamSwitch.start();
    t = await startTestApp({ RATE_LIMITS: 'off', LOG_LEVEL: 'trace', AUTH_ORIGIN: sw.origin }, { logLines: lines });
    sw.target = t.port;
    await createTenant(t, 'acme', 'Acme');
    await addMember(t, 'acme', 'finder@studio.example', 'developer');
    await emailUserId(t, 'acme', address);
  });
  afterAll(async () => {
    await t.close();
    await sw.stop();
  });
  afterEach(() => {
    sw.answer = null;
  });

  it.each([
    [401, 401, 'API refused the console bearer; console session dropped'],
    [503, 503, 'dependency unavailable'],
    [429, 503, 'dependency unavailable'],
  ])(
    'a player search the API answers %i: the BFF’s line names the path, never the query or the address',
    async (upstream, answered, msg) => {
      const s = await consoleSignIn(t, 'finder@studio.example');
      const id = `player-search-${upstream}`;
      const find = (requestId: string) =>
        t
          .console()
          .get('/api/management/tenants/acme/users')
          .query({ q: address })
          .set('Cookie', s.cookie)
          .set('X-Request-Id', requestId);
      expect((await find(`${id}-ok`).expect(200)).body.users).toHaveLength(1);
      sw.answer = { prefix: '/management/tenants/acme/users', status: upstream, body: '{"error":"x"}' };
      await find(id).expect(answered);
      await untilRequestLogged(lines, id);

      const ofSearches = lines.filter((l) => l.includes(id));
      const line = ofSearches.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === msg);
      expect(JSON.stringify(line)).toContain('/management/tenants/acme/users');
      const all = ofSearches.join('');
      for (const held of ['looked.up.player', 'example.com', 'q=']) expect(all).not.toContain(held);
    },
  );
});
