// The lower bound for `npm run bench`: the static route, guest creation and the refresh grant as
// the least the specification and the contract let a route built on the fixed stack do, in a bare
// NestJS app. What a route of the service adds beyond this (validation, guards, metrics, the
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
//   refresh token's MAC checked, its rotation in one script, one RS256 signature (JwsSigner);
//   GET /management-auth/current: the bearer's RS256 signature checked by jose once per token (an
//   LRU of verified claims, as the service keeps), the live session read (one HMGET), the answer.
//
// Environment: PORT, DATABASE_URL (an empty database it owns), REDIS_URL, REDIS_KEY_PREFIX,
// LOWER_BOUND_CLIENT_SECRET. Also answers GET /readyz, and POST /seed with a fresh session's refresh
// and access tokens.
import 'reflect-metadata';
import {
  createHash,
  createHmac,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  timingSafeEqual,
} from 'node:crypto';
import { Body, Controller, Get, HttpCode, Injectable, Module, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import Redis from 'ioredis';
import { jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import { BasicStrategy } from 'passport-http';
import { Pool } from 'pg';
import pino from 'pino';
// The service's own signer: the lower bound signs exactly as the service does.
import { JwsSigner } from '../../src/platform/keys/jws-signer';

interface BoundRedis extends Redis {
  budgets(n: number, ...keysAndLimit: Array<string | number>): Promise<number>;
  startSession(...keysAndArgs: Array<string | number>): Promise<number>;
  rotate(key: string, gen: string): Promise<string | null>;
}

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`lower-bound: ${name} is required`);
  return value;
};
const redis = new Redis(env('REDIS_URL'), { keyPrefix: env('REDIS_KEY_PREFIX') }) as BoundRedis;
const db = new Pool({ connectionString: env('DATABASE_URL'), max: 20 });
const log = pino({ base: { service: 'lower-bound' } }, pino.destination({ dest: '/dev/null', sync: true }));
const macKey = createSecretKey(randomBytes(32));
const mac = (domain: string, value: string) =>
  createHmac('sha256', macKey).update(`${domain}\0${value}`).digest('base64url');
const secretDigest = createHash('sha256').update(env('LOWER_BOUND_CLIENT_SECRET')).digest();
const es256 = new JwsSigner('ES256', 'es', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
const rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const rs256 = new JwsSigner('RS256', 'rs', rsaKey);
const rsaPublic = createPublicKey(rsaKey);
const verified = new LRUCache<string, { sub: string; sid: string; exp: number }>({ max: 20_000 });
const MANAGEMENT = { issuer: 'http://localhost/t/control-plane', audience: 'urn:svc:management' };

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

const BUDGET = 100_000_000;
const client = { id: 'cli_bench', tenantId: 'bench', scopes: ['openid', 'offline_access'] };
const refreshToken = (sessionId: string, gen: number) => `${sessionId}.${gen}.${mac('refresh', `${sessionId}.${gen}`)}`;

function managementToken(userId: string, sessionId: string): string {
  const now = Math.floor(Date.now() / 1000);
  return rs256.sign('at+jwt', {
    iss: MANAGEMENT.issuer,
    sub: userId,
    aud: MANAGEMENT.audience,
    iat: now,
    exp: now + 300,
    jti: randomUUID(),
    client_id: 'cli_console',
    sid: sessionId,
    scope: 'tenant:read',
    token_use: 'management',
  });
}

@Injectable()
class BasicClient extends PassportStrategy(BasicStrategy, 'basic') {
  validate(id: string, secret: string): { id: string } | false {
    const digest = createHash('sha256').update(secret).digest();
    return id === 'cli_console' && timingSafeEqual(digest, secretDigest) ? { id } : false;
  }
}

@Controller()
class LowerBoundController {
  @Post('t/:tenantId/guest')
  @HttpCode(201)
  async guest(
    @Param('tenantId') tenantId: string,
    @Body() body: { client_id?: string; browser_flow_id: string },
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    const address = req.socket.remoteAddress ?? '';
    if (!(await redis.budgets(1, `rl:ip-guest:{${mac('network', address)}}`, BUDGET))) throw new Error('429');
    if (tenantId !== client.tenantId || body.client_id !== client.id) throw new Error('400');
    const slot = mac(`tenant:${tenantId}`, address);
    if (!(await redis.budgets(2, `rl:g-client:{${slot}}:${client.id}`, `rl:g-tenant:{${slot}}`, BUDGET)))
      throw new Error('429');
    const cookie = randomBytes(32).toString('base64url');
    const cookieHash = createHash('sha256').update(cookie).digest('base64url');
    const flowKey = `gf:{${body.browser_flow_id}}`;
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
    const common = { iss: issuer, sub: userId, aud: client.id, iat: now, exp: now + 300, sid: sessionId, guest: true };
    // The writes go out first: the (synchronous) signatures run while Redis answers.
    const writes = Promise.all([
      redis.startSession(`s:{${userId}}:${sessionId}`, `u:{${userId}}`, userId, client.id, 2_592_000, Date.now()),
      redis.set(
        `g:{${body.browser_flow_id}}:prf:${proofId}`,
        JSON.stringify({ userId, sessionId, cookieHash }),
        'EX',
        300,
      ),
    ]);
    const accessToken = es256.sign('at+jwt', {
      ...common,
      jti: randomUUID(),
      client_id: client.id,
      scope: client.scopes.join(' '),
      token_use: 'access',
    });
    const idToken = es256.sign('JWT', { ...common, auth_time: now });
    await writes;
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
      refresh_token: refreshToken(sessionId, 0),
      id_token: idToken,
      scope: client.scopes.join(' '),
      session_id: sessionId,
    };
  }

  @Post('management-auth/token')
  @HttpCode(200)
  @UseGuards(AuthGuard('basic'))
  async token(@Req() req: Request): Promise<Record<string, unknown>> {
    const { grant_type: grantType, refresh_token: presented } = req.body as Record<string, unknown>;
    if (grantType !== 'refresh_token' || typeof presented !== 'string') throw new Error('400');
    const [sessionId = '', gen = '', tag = ''] = presented.split('.');
    const expected = mac('refresh', `${sessionId}.${gen}`);
    if (tag.length !== expected.length || !timingSafeEqual(Buffer.from(tag), Buffer.from(expected)))
      throw new Error('400');
    const userId = await redis.rotate(`s:{${sessionId}}`, gen);
    if (!userId) throw new Error('400');
    return {
      access_token: managementToken(userId, sessionId),
      token_type: 'Bearer',
      expires_in: 300,
      refresh_token: refreshToken(sessionId, Number(gen) + 1),
      scope: 'tenant:read',
      session_id: sessionId,
    };
  }

  @Get('management-auth/current')
  async current(@Req() req: Request): Promise<{ user: { id: string; email: string; email_verified: true } }> {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token) throw new Error('401');
    let claims = verified.get(token);
    if (!claims) {
      const { payload } = await jwtVerify(token, rsaPublic, { ...MANAGEMENT, algorithms: ['RS256'], typ: 'at+jwt' });
      claims = { sub: String(payload.sub), sid: String(payload.sid), exp: Number(payload.exp) };
      verified.set(token, claims, { ttl: claims.exp * 1000 - Date.now() });
    }
    if (claims.exp <= Date.now() / 1000) throw new Error('401');
    const [userId, email] = await redis.hmget(`s:{${claims.sid}}`, 'uid', 'email');
    if (userId !== claims.sub || !email) throw new Error('401');
    return { user: { id: userId, email, email_verified: true } };
  }

  /** A new live session's refresh token (the bench's rotation chains) and access token. */
  @Post('seed')
  async seed(): Promise<{ refresh_token: string; access_token: string }> {
    const sessionId = `ses_${randomBytes(16).toString('base64url')}`;
    await redis.hset(`s:{${sessionId}}`, 'uid', 'usr_bench', 'gen', '0', 'email', 'bench@bench.example');
    await redis.expire(`s:{${sessionId}}`, 86_400);
    return { refresh_token: refreshToken(sessionId, 0), access_token: managementToken('usr_bench', sessionId) };
  }

  @Get(['healthz', 'readyz'])
  ready(): { status: string } {
    return { status: 'ok' };
  }
}

@Module({ controllers: [LowerBoundController], providers: [BasicClient] })
class LowerBoundModule {}

async function main(): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS users (id text PRIMARY KEY, tenant_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS sessions (id text PRIMARY KEY, user_id text NOT NULL REFERENCES users,
    client_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
  const app = await NestFactory.create(LowerBoundModule, { logger: false });
  app.getHttpAdapter().getInstance().disable('x-powered-by').set('etag', false);
  const headers: Array<[string, string]> = [['Cache-Control', 'no-store']];
  const collect = { setHeader: (name: string, value: string) => headers.push([name, value]), removeHeader: () => {} };
  helmet()({} as Request, collect as unknown as Response, () => {});
  app.use((req: Request, res: Response, next: NextFunction) => {
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

// Exit on SIGTERM through process.exit, so a --cpu-prof profile is written (BENCH_PROFILE=1).
process.on('SIGTERM', () => process.exit(0));

main().catch((err: Error) => {
  process.stderr.write(`lower-bound: ${err.stack}\n`);
  process.exit(1);
});
