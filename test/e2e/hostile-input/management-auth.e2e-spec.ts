import fc from 'fast-check';
import { startFlow, type StartedFlow } from '../../support/management-flow';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';
import { expectContractError, headerSafe, stateSnapshot } from '../../support/hostile-input';

/**
 * Property-based hostile input over the management-auth endpoints: random, malformed, oversized,
 * deeply nested and non-UTF-8 bodies and random credential headers. Never a 5xx, always the
 * contract's error shape, never a state change. Seeded, so a failure reproduces.
 */
const SEED = 20261122;
const RUNS = 30;
jest.setTimeout(90_000);

const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.fullUnicodeString({ maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\r\n',
    'ⅼocalhost',
    'lоcalhost',
    '%00',
    '../..',
    'null',
    '{}',
    '[]',
    'true',
    '1e309',
    '__proto__',
    'constructor',
  ),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ minLength: 17_000, maxLength: 17_000 }),
);
const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nasty,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 12 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;
// Deep nesting travels as raw text so fast-check can print a counterexample.
const deep = fc.integer({ min: 50, max: 3000 }).map((n) => Buffer.from('{"a":'.repeat(n) + '1' + '}'.repeat(n)));
const fieldsLike = (names: string[]) =>
  fc.record(Object.fromEntries(names.map((n) => [n, nasty])), { requiredKeys: [] });
const rawBodies = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  deep,
  fc.constantFrom(
    Buffer.from([0xc3, 0x28]),
    Buffer.from([0xff, 0xfe, 0x7b]),
    Buffer.from('{"flow_id": "\ud800"}'),
    Buffer.from('{"a":1,"a":2}'),
  ),
);

describe('hostile input: management-auth', () => {
  let t: TestApp;
  let flow: StartedFlow;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    flow = await startFlow(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const endpoints: Array<[string, string, Record<string, string>, string[]]> = [
    ['email/start', '/management-auth/email/start', {}, ['flow_id', 'email']],
    ['email/confirm', '/management-auth/email/confirm', {}, ['flow_id', 'email', 'code']],
    [
      'token',
      '/management-auth/token',
      { basic: '1' },
      ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token'],
    ],
    ['revoke-session', '/management-auth/revoke-session', { basic: '1' }, ['session_id']],
  ];

  describe.each(endpoints)('%s', (_name, path, opts, fields) => {
    const post = (body: unknown, raw = false) => {
      let req = t
        .auth()
        .post(path)
        .set('Origin', t.authOrigin)
        .set('Cookie', flow.cookie)
        .set('Content-Type', 'application/json');
      if (opts.basic) req = req.set('Authorization', consoleBasic(t));
      return req.send(raw ? (body as Buffer) : JSON.stringify(body));
    };

    it('answers random JSON values with a 4xx in the error shape and changes nothing', async () => {
      const before = await stateSnapshot(t);
      await fc.assert(
        fc.asyncProperty(fc.oneof(jsonish, fieldsLike(fields), fieldsLike([...fields, 'extra'])), async (body) => {
          expectContractError(await post(body));
        }),
        { seed: SEED, numRuns: RUNS },
      );
      expect(await stateSnapshot(t)).toBe(before);
    });

    it('answers raw, truncated and non-UTF-8 bodies with a 4xx', async () => {
      const before = await stateSnapshot(t);
      await fc.assert(
        fc.asyncProperty(rawBodies, async (body) => {
          expectContractError(await post(body, true));
        }),
        { seed: SEED, numRuns: RUNS },
      );
      expect(await stateSnapshot(t)).toBe(before);
    });
  });

  it('answers random Authorization headers on bearer and Basic routes with 401, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.string({ maxLength: 200 }).map((s) => `Bearer ${s}`),
          fc.string({ maxLength: 200 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
          fc.base64String({ maxLength: 300 }).map((s) => `Bearer ${s}.${s}.${s}`),
        ),
        async (authorization) => {
          fc.pre(headerSafe(authorization));
          const current = await t.auth().get('/management-auth/current').set('Authorization', authorization);
          expect(current.status).toBe(401);
          expectContractError(current);
          const revoke = await t
            .auth()
            .post('/management-auth/revoke-session')
            .set('Authorization', authorization)
            .send({ session_id: 'ses_AAAAAAAAAAAAAAAAAAAAAA' });
          expect(revoke.status).toBe(401);
        },
      ),
      { seed: SEED, numRuns: RUNS * 2 },
    );
  });

  it('answers random Origin and Cookie headers on the email endpoints with 403 or 400', async () => {
    const before = await stateSnapshot(t);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 120 }), fc.string({ maxLength: 300 }), async (origin, cookie) => {
        fc.pre(headerSafe(origin) && headerSafe(cookie) && origin !== t.authOrigin);
        const res = await t
          .auth()
          .post('/management-auth/email/start')
          .set('Origin', origin)
          .set('Cookie', cookie)
          .send({ flow_id: flow.flowId, email: 'x@studio.example' });
        expect(res.status).toBe(403);
        expectContractError(res);
      }),
      { seed: SEED, numRuns: RUNS * 2 },
    );
    expect(await stateSnapshot(t)).toBe(before);
  });

  it('answers random Host headers with 404 not_found', async () => {
    const { default: request } = await import('supertest');
    await fc.assert(
      fc.asyncProperty(fc.domain(), fc.option(fc.integer({ min: 1, max: 65535 })), async (host, port) => {
        const h = port === null ? host : `${host}:${port}`;
        fc.pre(h !== `localhost:${t.port}` && h !== `127.0.0.1:${t.port}`);
        const res = await request(t.app.getHttpServer()).get('/management-auth/current').set('Host', h);
        expect(res.status).toBe(404);
        expectContractError(res);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('answers random authorize queries without a 5xx and without redirecting to an unregistered URI', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.constantFrom(
            'response_type',
            'client_id',
            'redirect_uri',
            'scope',
            'state',
            'code_challenge',
            'code_challenge_method',
            'x',
          ),
          fc.string({ maxLength: 60 }),
        ),
        async (query) => {
          const res = await t.auth().get('/management-auth/authorize').query(query);
          expect(res.status).toBeLessThan(500);
          if (res.status === 303)
            expect((res.headers.location as string).startsWith(`${t.consoleOrigin}/api/auth/callback?`)).toBe(true);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
