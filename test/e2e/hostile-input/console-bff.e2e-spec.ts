import fc from 'fast-check';
import {
  CONSOLE_COOKIE,
  FLOW_COOKIE,
  consoleSignIn,
  consoleStart,
  setCookieLine,
  type ConsoleSession,
} from '../../support/console-flow';
import { startTestApp, type TestApp } from '../../support/test-app';
import { expectContractError, headerSafe, stateSnapshot } from '../../support/hostile-input';

/**
 * Property-based hostile input over the console BFF: the headers it parses (Cookie, Origin, Host)
 * and the callback's query. Never a 5xx, always the contract's error shape or the console's
 * error redirect, never a console session, never a state change. Seeded, so a failure reproduces.
 */
const SEED = 20261123;
const RUNS = 30;
jest.setTimeout(120_000);

const cookieValue = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc
    .base64String({ minLength: 40, maxLength: 120 })
    .map((s) => s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')),
  fc.constantFrom('', '""', 'null', '%00', 'a'.repeat(4096), '__proto__'),
);
const cookieHeader = fc.oneof(
  fc.string({ maxLength: 300 }),
  cookieValue.map((v) => `${CONSOLE_COOKIE}=${v}`),
  fc.tuple(cookieValue, cookieValue).map(([a, b]) => `${CONSOLE_COOKIE}=${a}; ${FLOW_COOKIE}=${b}`),
  cookieValue.map((v) => `__Host-svc_console =${v}; __host-svc_console=${v}`),
);

describe('hostile input: console BFF', () => {
  let t: TestApp;
  let session: ConsoleSession;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    session = await consoleSignIn(t, 'hostile@studio.example');
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers random Cookie headers on session routes with 401 unauthorized and changes nothing', async () => {
    const before = await stateSnapshot(t);
    await fc.assert(
      fc.asyncProperty(
        cookieHeader,
        fc.constantFrom('/api/auth/current', '/api/management/tenants', '/api/management/tenants/acme/clients'),
        async (cookie, path) => {
          fc.pre(headerSafe(cookie));
          const res = await t.console().get(path).set('Cookie', cookie);
          expectContractError(res, 401);
          expect(setCookieLine(res, CONSOLE_COOKIE) ?? '').not.toMatch(new RegExp(`^${CONSOLE_COOKIE}=[^;]`));
        },
      ),
      { seed: SEED, numRuns: RUNS * 2 },
    );
    expect(await stateSnapshot(t)).toBe(before);
    await t.console().get('/api/auth/current').set('Cookie', session.cookie).expect(200);
  });

  it('answers random Origin headers on the state-changing POSTs with 403 and keeps the session', async () => {
    const before = await stateSnapshot(t);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 120 }),
          fc.webUrl(),
          fc.constantFrom('null', t.consoleOrigin + '/', t.authOrigin, t.consoleOrigin.toUpperCase()),
        ),
        async (origin) => {
          fc.pre(headerSafe(origin) && origin !== t.consoleOrigin);
          const start = await t.console().post('/api/auth/start').set('Origin', origin);
          expectContractError(start, 403);
          expect(setCookieLine(start, FLOW_COOKIE)).toBeUndefined();
          const signOut = await t
            .console()
            .post('/api/auth/sign-out')
            .set('Origin', origin)
            .set('Cookie', session.cookie);
          expectContractError(signOut, 403);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    expect(await stateSnapshot(t)).toBe(before);
    await t.console().get('/api/auth/current').set('Cookie', session.cookie).expect(200);
  });

  const callbackQuery = fc.dictionary(
    fc.constantFrom('code', 'state', 'iss', 'error', 'error_description', 'x'),
    fc.oneof(fc.string({ maxLength: 80 }), fc.fullUnicodeString({ maxLength: 20 })),
    {
      maxKeys: 5,
    },
  );

  it('answers random callback queries and flow cookies with the error redirect, never a session, changing nothing', async () => {
    const before = await stateSnapshot(t);
    await fc.assert(
      fc.asyncProperty(callbackQuery, fc.option(cookieValue), async (query, flowCookie) => {
        fc.pre(flowCookie === null || headerSafe(flowCookie));
        const req = t.console().get('/api/auth/callback').query(query);
        const res = await (flowCookie === null ? req : req.set('Cookie', `${FLOW_COOKIE}=${flowCookie}`));
        expect(res.status).toBe(303);
        expect(res.headers.location).toMatch(/^\/\?error=[a-z_]+$/);
        expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
      }),
      { seed: SEED, numRuns: RUNS * 2 },
    );
    expect(await stateSnapshot(t)).toBe(before);
  });

  it('a real pending sign-in with a random code or state never yields a console session', async () => {
    await fc.assert(
      fc.asyncProperty(callbackQuery, async (query) => {
        const started = await consoleStart(t);
        const res = await t.console().get('/api/auth/callback').query(query).set('Cookie', started.flowCookie);
        expect(res.status).toBe(303);
        expect(res.headers.location).toMatch(/^\/\?error=[a-z_]+$/);
        expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
      }),
      { seed: SEED, numRuns: RUNS / 2 },
    );
  });

  it('answers random Host headers on console routes with 404 not_found', async () => {
    const { default: request } = await import('supertest');
    await fc.assert(
      fc.asyncProperty(
        fc.domain(),
        fc.option(fc.integer({ min: 1, max: 65535 })),
        fc.constantFrom('/api/auth/current', '/api/management/tenants', '/'),
        async (host, port, path) => {
          const h = port === null ? host : `${host}:${port}`;
          fc.pre(h !== `localhost:${t.port}` && h !== `127.0.0.1:${t.port}`);
          const res = await request(t.app.getHttpServer()).get(path).set('Host', h).set('Cookie', session.cookie);
          expectContractError(res, 404);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('answers random paths under /api/management without a session with 401 or 404, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.webSegment(), fc.constantFrom('..', '%2e%2e', '%2F', 'tenants', 'acme', 'clients', '')), {
          minLength: 1,
          maxLength: 5,
        }),
        async (segments) => {
          const res = await t.console().get(`/api/management/${segments.join('/')}`);
          expect([401, 404]).toContain(res.status);
          expect(res.body).toEqual({
            error: expect.stringMatching(/^[a-z_]+$/),
            error_description: expect.any(String),
          });
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
