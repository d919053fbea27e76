#!/usr/bin/env node
// The lower bound for `BENCH_LOWER_BOUND=1 npm run bench`: the static route, guest creation and
// the refresh grant as the least the specification and the contract let a route built on the
// fixed stack do, in a bare NestJS app. What a route of the service adds beyond this (validation, guards, metrics, the
// flow's rules, TypeORM) is what it costs over this floor; what this floor measures against the
// peer is the best any implementation on this stack could do.
//
//   every request: helmet's headers (computed once, as the service does), a request id,
//   Cache-Control: no-store, one access log line (pino, to /dev/null) except for the probes;
//   GET /healthz: the static answer;
//   POST /t/:tenantId/guest: the network's budget (one script), the client row from memory (the
//   best case of a cache), the tenant's two budgets (one script), the flow claimed (SET NX), user
//   and session inserted (one statement), then at once the live session with its user index (one
//   script: the best case of a key layout), the upgrade proof, and two ES256 signatures (access
//   and ID token through the service's JwsSigner); the flow cookie set;
//   POST /management-auth/token: HTTP Basic through @nestjs/passport and passport-http, the
//   refresh token's MAC checked, its rotation in one script, one RS256 signature (JwsSigner).
//
// Environment: PORT, DATABASE_URL (an empty database it owns), REDIS_URL, REDIS_KEY_PREFIX,
// LOWER_BOUND_CLIENT_SECRET. Also answers GET /readyz, and POST /seed with a fresh refresh token.
'use strict';
require('reflect-metadata');
const {
  createHash,
  createHmac,
  createSecretKey,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  timingSafeEqual,
} = require('node:crypto');
const {
  Body,
  Controller,
  Get,
  HttpCode,
  Injectable,
  Module,
  Param,
  Post,
  Req,
  Res,
  UseGuards,
} = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { AuthGuard, PassportStrategy } = require('@nestjs/passport');
const helmet = require('helmet');
const Redis = require('ioredis');
const { Pool } = require('pg');
const pino = require('pino');
const { BasicStrategy } = require('passport-http');
// The service's own signer, from the build the bench makes first: the lower bound signs exactly as
// the service does (synchronously through node:crypto), so the comparison stays honest.
const { JwsSigner } = require('../dist/src/platform/keys/jws-signer');

const redis = new Redis(process.env.REDIS_URL, { keyPrefix: process.env.REDIS_KEY_PREFIX });
const db = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const log = pino({ base: { service: 'lower-bound' } }, pino.destination({ dest: '/dev/null', sync: true }));
const macKey = createSecretKey(randomBytes(32));
const mac = (domain, value) => createHmac('sha256', macKey).update(`${domain}\0${value}`).digest('base64url');
const secretDigest = createHash('sha256').update(process.env.LOWER_BOUND_CLIENT_SECRET).digest();

// Fixed-window budgets, all keys of one slot in one script, all or none.
redis.defineCommand('budgets', {
  lua: `for i, k in ipairs(KEYS) do if tonumber(redis.call('GET', k) or '0') >= tonumber(ARGV[1]) then return 0 end end
for i, k in ipairs(KEYS) do if redis.call('INCR', k) == 1 then redis.call('EXPIRE', k, 60) end end
return 1`,
});
redis.defineCommand('startSession', {
  numberOfKeys: 2,
  lua: `redis.call('HSET', KEYS[1], 'uid', ARGV[1], 'cid', ARGV[2], 'gen', '0')
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], KEYS[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3] * 1000)
return 1`,
});
redis.defineCommand('rotate', {
  numberOfKeys: 1,
  lua: `local s = redis.call('HMGET', KEYS[1], 'gen', 'uid')
if s[1] ~= ARGV[1] then return nil end
redis.call('HSET', KEYS[1], 'gen', tonumber(ARGV[1]) + 1)
return s[2]`,
});

let es256;
let rs256;
const BUDGET = 100_000_000;
const client = { id: 'cli_bench', tenantId: 'bench', scopes: ['openid', 'offline_access'] };

class BasicClient extends PassportStrategy(BasicStrategy, 'basic') {
  validate(id, secret) {
    const digest = createHash('sha256').update(secret).digest();
    return id === 'cli_console' && timingSafeEqual(digest, secretDigest) ? { id } : false;
  }
}
Injectable()(BasicClient);

const token = (sessionId, gen) => {
  const body = `${sessionId}.${gen}`;
  return `${body}.${mac('refresh', body)}`;
};

class LowerBoundController {
  async guest(tenantId, body, req, res) {
    const network = mac('network', req.socket.remoteAddress);
    if (!(await redis.budgets(1, `rl:ip-guest:{${network}}`, BUDGET))) throw new Error('429');
    if (tenantId !== client.tenantId || body.client_id !== client.id) throw new Error('400');
    const slot = mac(`tenant:${tenantId}`, req.socket.remoteAddress);
    if (!(await redis.budgets(2, `rl:g-client:{${slot}}:${client.id}`, `rl:g-tenant:{${slot}}`, BUDGET)))
      throw new Error('429');
    const cookie = randomBytes(32).toString('base64url');
    const flowKey = `gf:{${body.browser_flow_id}}`;
    const cookieHash = createHash('sha256').update(cookie).digest('base64url');
    if (!(await redis.set(flowKey, JSON.stringify({ tenantId, cookieHash }), 'EX', 3600, 'NX'))) throw new Error('403');
    const userId = `usr_${randomBytes(16).toString('base64url')}`;
    const sessionId = `ses_${randomBytes(16).toString('base64url')}`;
    await db.query(
      `WITH u AS (INSERT INTO users (id, tenant_id) VALUES ($1, $2) RETURNING id)
       INSERT INTO sessions (id, user_id, client_id) SELECT $3, u.id, $4 FROM u`,
      [userId, tenantId, sessionId, client.id],
    );
    const proofId = `prf_${randomBytes(16).toString('base64url')}`;
    const issuer = `http://localhost/t/${tenantId}`;
    const now = Math.floor(Date.now() / 1000);
    const [, , accessToken, idToken] = await Promise.all([
      redis.startSession(`s:{${userId}}:${sessionId}`, `u:{${userId}}`, userId, client.id, 2_592_000, Date.now()),
      redis.set(
        `g:{${body.browser_flow_id}}:prf:${proofId}`,
        JSON.stringify({ userId, sessionId, cookieHash }),
        'EX',
        300,
      ),
      es256.sign('at+jwt', {
        iss: issuer,
        sub: userId,
        aud: client.id,
        iat: now,
        exp: now + 300,
        jti: randomUUID(),
        client_id: client.id,
        sid: sessionId,
        scope: client.scopes.join(' '),
        token_use: 'access',
        guest: true,
      }),
      es256.sign('JWT', {
        iss: issuer,
        sub: userId,
        aud: client.id,
        iat: now,
        exp: now + 300,
        auth_time: now,
        sid: sessionId,
        guest: true,
      }),
    ]);
    res.cookie(`__Host-svc_flow_${body.browser_flow_id}`, cookie, {
      httpOnly: true,
      secure: true,
      sameSite: 'lax',
      path: '/',
      maxAge: 3_600_000,
    });
    return {
      user_id: userId,
      upgrade_proof: { proof_id: proofId, expires_in: 300 },
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 300,
      refresh_token: token(sessionId, 0),
      id_token: idToken,
      scope: client.scopes.join(' '),
      session_id: sessionId,
    };
  }

  async token(req) {
    const { grant_type: grantType, refresh_token: refreshToken } = req.body;
    if (grantType !== 'refresh_token' || typeof refreshToken !== 'string') throw new Error('400');
    const [sessionId, gen, tag] = refreshToken.split('.');
    const expected = mac('refresh', `${sessionId}.${gen}`);
    if (!tag || tag.length !== expected.length || !timingSafeEqual(Buffer.from(tag), Buffer.from(expected)))
      throw new Error('400');
    const userId = await redis.rotate(`s:{${sessionId}}`, gen);
    if (!userId) throw new Error('400');
    const now = Math.floor(Date.now() / 1000);
    const accessToken = rs256.sign('at+jwt', {
      iss: 'http://localhost/t/control-plane',
      sub: userId,
      aud: 'urn:svc:management',
      iat: now,
      exp: now + 300,
      jti: randomUUID(),
      client_id: 'cli_console',
      sid: sessionId,
      scope: 'tenant:read',
      token_use: 'management',
    });
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 300,
      refresh_token: token(sessionId, Number(gen) + 1),
      scope: 'tenant:read',
      session_id: sessionId,
    };
  }

  /** A refresh token of a new live session, for the bench's rotation chains. */
  async seed() {
    const sessionId = `ses_${randomBytes(16).toString('base64url')}`;
    await redis.hset(`s:{${sessionId}}`, 'uid', 'usr_bench', 'gen', '0');
    await redis.expire(`s:{${sessionId}}`, 86_400);
    return { refresh_token: token(sessionId, 0) };
  }

  ready() {
    return { status: 'ok' };
  }
}
// Decorators applied by hand: this file is plain JavaScript, run without a build.
const route = (name, ...decorators) => {
  const descriptor = Object.getOwnPropertyDescriptor(LowerBoundController.prototype, name);
  for (const d of decorators) d(LowerBoundController.prototype, name, descriptor);
};
Param('tenantId')(LowerBoundController.prototype, 'guest', 0);
Body()(LowerBoundController.prototype, 'guest', 1);
Req()(LowerBoundController.prototype, 'guest', 2);
Res({ passthrough: true })(LowerBoundController.prototype, 'guest', 3);
route('guest', HttpCode(201), Post('t/:tenantId/guest'));
Req()(LowerBoundController.prototype, 'token', 0);
route('token', HttpCode(200), UseGuards(AuthGuard('basic')), Post('management-auth/token'));
route('seed', Post('seed'));
route('ready', Get(['healthz', 'readyz']));
Controller()(LowerBoundController);

class LowerBoundModule {}
Module({ controllers: [LowerBoundController], providers: [BasicClient] })(LowerBoundModule);

async function main() {
  es256 = new JwsSigner('ES256', 'es', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  rs256 = new JwsSigner('RS256', 'rs', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
  await db.query(`CREATE TABLE IF NOT EXISTS users (id text PRIMARY KEY, tenant_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS sessions (id text PRIMARY KEY, user_id text NOT NULL REFERENCES users,
    client_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
  const app = await NestFactory.create(LowerBoundModule, { logger: false });
  app.getHttpAdapter().getInstance().disable('x-powered-by').set('etag', false);
  const headers = [['Cache-Control', 'no-store']];
  helmet()({}, { setHeader: (name, value) => headers.push([name, value]), removeHeader: () => {} }, () => {});
  app.use((req, res, next) => {
    const id = randomUUID();
    const started = Date.now();
    res.setHeader('X-Request-Id', id);
    for (const [name, value] of headers) res.setHeader(name, value);
    if (req.path === '/healthz' || req.path === '/readyz') return next();
    res.once('close', () =>
      log.info(
        {
          req: { id, method: req.method, path: req.path },
          res: { statusCode: res.statusCode },
          ms: Date.now() - started,
        },
        'request completed',
      ),
    );
    next();
  });
  await app.listen(Number(process.env.PORT));
}

main().catch((err) => {
  process.stderr.write(`lower-bound: ${err.stack}\n`);
  process.exit(1);
});
