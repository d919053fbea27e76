// The benchmark's peer: panva/oidc-provider 9 configured for the same work as svc-auth, so that
// `npm run bench` compares like with like in one run. Never loaded by the service.
//   - one confidential client authenticating with client_secret_basic;
//   - RS256 JWT access tokens for a resource indicator (one 2048-bit RSA signature, like ours);
//   - rotating refresh tokens, no ID tokens (no `openid` scope on the resource flows);
//   - userinfo with an opaque access token stored in Redis;
//   - a Redis adapter on the same Redis as the service, under its own key prefix;
//   - a minimal interaction: GET /interaction/:uid signs the account named by login_hint in
//     without a page, and consent is granted automatically (loadExistingGrant).
// Environment: PORT, REDIS_URL, REDIS_KEY_PREFIX, PEER_CLIENT_SECRET. Answers GET /readyz.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
const issuer = `http://localhost:${port}`;
export const RESOURCE = 'https://api.bench.example';

const redis = new Redis(process.env.REDIS_URL, { keyPrefix: process.env.REDIS_KEY_PREFIX });

// The Redis adapter of oidc-provider's example folder, on ioredis.
const grantable = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);
const consumable = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

class RedisAdapter {
  constructor(name) {
    this.name = name;
  }

  key(id) {
    return `${this.name}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    const multi = redis.multi();
    if (consumable.has(this.name)) multi.hset(key, { payload: JSON.stringify(payload) });
    else multi.set(key, JSON.stringify(payload));
    if (expiresIn) multi.expire(key, expiresIn);
    if (grantable.has(this.name) && payload.grantId) {
      const grantKey = `grant:${payload.grantId}`;
      multi.rpush(grantKey, key);
      const ttl = await redis.ttl(grantKey);
      if (expiresIn > ttl) multi.expire(grantKey, expiresIn);
    }
    if (payload.userCode) multi.set(`userCode:${payload.userCode}`, id, 'EX', expiresIn);
    if (payload.uid) multi.set(`uid:${payload.uid}`, id, 'EX', expiresIn);
    await multi.exec();
  }

  async find(id) {
    if (consumable.has(this.name)) {
      const data = await redis.hgetall(this.key(id));
      if (!data || !data.payload) return undefined;
      const { payload, ...rest } = data;
      return { ...rest, ...JSON.parse(payload) };
    }
    const data = await redis.get(this.key(id));
    return data ? JSON.parse(data) : undefined;
  }

  async findByUid(uid) {
    const id = await redis.get(`uid:${uid}`);
    return id ? this.find(id) : undefined;
  }

  async findByUserCode(userCode) {
    const id = await redis.get(`userCode:${userCode}`);
    return id ? this.find(id) : undefined;
  }

  async destroy(id) {
    await redis.del(this.key(id));
  }

  async revokeByGrantId(grantId) {
    const grantKey = `grant:${grantId}`;
    // The list holds prefixed-less keys; ioredis adds the prefix to each DEL.
    const tokens = await redis.lrange(grantKey, 0, -1);
    const multi = redis.multi();
    for (const token of tokens) multi.del(token);
    multi.del(grantKey);
    await multi.exec();
  }

  async consume(id) {
    await redis.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
  }
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'bench-rs256', alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  adapter: RedisAdapter,
  clients: [
    {
      client_id: 'bench',
      client_secret: process.env.PEER_CLIENT_SECRET,
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/cb'],
    },
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  scopes: ['openid'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    userinfo: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (resource !== RESOURCE) throw new Provider.errors.InvalidTarget();
        return {
          scope: 'api:read',
          audience: RESOURCE,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: {
    AccessToken: 300,
    AuthorizationCode: 60,
    ClientCredentials: 300,
    IdToken: 3600,
    Grant: 86_400,
    Interaction: 600,
    RefreshToken: 86_400,
    Session: 86_400,
  },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // Consent is automatic: the grant covers what the request asks for.
  loadExistingGrant: async (ctx) => {
    const { Grant } = ctx.oidc.provider;
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return Grant.find(grantId);
    const grant = new Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    const scope = ctx.oidc.params.scope ?? '';
    const oidcScope = scope
      .split(' ')
      .filter((s) => s === 'openid')
      .join(' ');
    if (oidcScope) grant.addOIDCScope(oidcScope);
    if (ctx.oidc.params.resource === RESOURCE) grant.addResourceScope(RESOURCE, 'api:read');
    await grant.save();
    return grant;
  },
});

// The minimal interaction: log in the account named by login_hint, no page.
provider.use(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/readyz') {
    ctx.body = { status: 'ok' };
    return;
  }
  if (ctx.method === 'GET' && ctx.path.startsWith('/interaction/')) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const accountId = details.params.login_hint || 'acc_bench';
    const url = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId } });
    ctx.status = 303;
    ctx.redirect(url);
    return;
  }
  await next();
});

provider.listen(port);
// Exit on SIGTERM through process.exit, so a --cpu-prof profile is written (BENCH_PROFILE=1).
process.on('SIGTERM', () => process.exit(0));
