import { consoleCallback, consoleSignIn, consoleStart, signInAtAuthHost } from '../../support/console-flow';
import { addMember, createTenant } from '../../support/console-fixtures';
import { untilRequestLogged } from '../../support/request-log';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * docs/operations.md, Logs: one id finds everything of a request. The BFF's calls to the API at
 * AUTH_INTERNAL_URL carry the console request's X-Request-Id, its grants to the token endpoint
 * (the callback's code exchange) as well as its resource calls.
 */
describe('console BFF: the request id of its grants', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    // Access tokens of 4 s: the BFF refreshes from 3 s on.
    t = await startTestApp(
      { RATE_LIMITS: 'off', LOG_LEVEL: 'info', MANAGEMENT_ACCESS_TOKEN_TTL: '4' },
      { logLines: lines },
    );
    await createTenant(t, 'acme', 'Acme');
    await addMember(t, 'acme', 'owner@studio.example', 'owner');
  });
  afterAll(() => t.close());

  /** "METHOD path" of every request logged as completed under this id. */
  function completedUnder(id: string): string[] {
    return lines
      .join('')
      .split('\n')
      .filter((l) => l.includes(id))
      .map((l) => JSON.parse(l) as { req?: { id?: string; method?: string; path?: string }; msg?: string })
      .filter((l) => l.req?.id === id && l.msg === 'request completed')
      .map((l) => `${l.req?.method} ${l.req?.path}`);
  }

  it("logs the callback's code exchange at the token endpoint under the callback's request id", async () => {
    const start = await consoleStart(t);
    const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, 'owner@studio.example');
    const id = 'console-callback-exchange';
    await consoleCallback(t, redirectTo, start.flowCookie).set('X-Request-Id', id).expect(303);
    await untilRequestLogged(lines, id);

    expect(completedUnder(id)).toEqual(
      expect.arrayContaining(['POST /management-auth/token', 'GET /api/auth/callback']),
    );
  });

  it("logs the refresh a console request makes under that request's id", async () => {
    const s = await consoleSignIn(t, 'owner@studio.example');
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    const id = 'console-current-refresh';
    await t.console().get('/api/auth/current').set('Cookie', s.cookie).set('X-Request-Id', id).expect(200);
    await untilRequestLogged(lines, id);

    expect(completedUnder(id)).toEqual(
      expect.arrayContaining(['POST /management-auth/token', 'GET /management-auth/current', 'GET /api/auth/current']),
    );
  });
});
