import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { importJWK, type JWK } from 'jose';
import { HTTPS_IN_PRODUCTION, httpUrl, isCleartextOverNetwork } from './secure-transport';

/**
 * The one typed configuration object (contract section 1). Built once at boot from the
 * environment; any missing or malformed variable stops start-up with a message that names
 * the variable and never prints its value.
 */
export interface AppConfig {
  readonly nodeEnv: 'production' | 'development' | 'test';
  readonly port: number;
  /** Listen address (HOST); null listens on every interface, as inside the container image. */
  readonly host: string | null;
  readonly metricsPort: number | null;
  /** Address of the metrics listener; loopback unless an operator opens it (contract 12). */
  readonly metricsHost: string;
  readonly authOrigin: string;
  readonly consoleOrigin: string;
  /** Base URL the console BFF uses to reach the API; defaults to AUTH_ORIGIN. */
  readonly authInternalUrl: string;
  /**
   * Proxies trusted in front of the service (TRUST_PROXY=true: TRUST_PROXY_HOPS, default 1; a CDN
   * and a load balancer are 2); 0 when TRUST_PROXY is not true. Truthy exactly when forwarded
   * headers are honoured.
   */
  readonly trustProxy: number;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly redisClusterNodes: readonly string[];
  readonly redisKeyPrefix: string;
  readonly consoleClientId: string;
  /** The secret the BFF presents: the first of CONSOLE_CLIENT_SECRET's comma-separated list. */
  readonly consoleClientSecret: string;
  /** Every accepted console client secret; more than one only during a rotation's overlap. */
  readonly consoleClientSecrets: readonly string[];
  /** Seals console sessions: the first of CONSOLE_SESSION_KEY's list (contract 12). */
  readonly consoleSessionKey: Buffer;
  /** Every key that opens console sessions, the sealing key first. */
  readonly consoleSessionKeys: readonly Buffer[];
  /** Digests and seals: the first of PRIVACY_KEY's list (contract 12). */
  readonly privacyKey: Buffer;
  /** Every key that verifies digests and opens seals, the current key first. */
  readonly privacyKeys: readonly Buffer[];
  /** Audit rows older than this many days are purged (contract 12). */
  readonly auditRetentionDays: number;
  /** Guests without a credential are purged this many days after their last session ended (contract 13). */
  readonly guestRetentionDays: number;
  /** Customer sessions (contract 13): they slide on every refresh, so players who play keep them. */
  readonly customerSessions: CustomerSessionSettings;
  readonly signingKeys: readonly JWK[];
  readonly ttl: Readonly<{
    managementAccessToken: number;
    emailCode: number;
    emailCodeMaxAttempts: number;
    consoleSessionIdle: number;
    consoleSessionAbsolute: number;
    guestAccessToken: number;
    upgradeProof: number;
    providerProof: number;
    linkingIntent: number;
    controlPlaneSession: number;
  }>;
  readonly rateLimits: RateLimitConfig;
  /**
   * Milliseconds a client row (and a tenant's web origins) read from PostgreSQL is trusted: a
   * disabled client stops working within this. CLIENT_CACHE_TTL_MS may shorten it, never lengthen it.
   */
  readonly clientCacheTtlMs: number;
  readonly mail: MailConfig;
  readonly chatPlatform: Readonly<{ authorizeUrl: string; apiBase: string }>;
  readonly logLevel: string;
  /** Bound on every outbound call (Redis, PostgreSQL, SMTP, HTTP), in milliseconds. */
  readonly dependencyTimeoutMs: number;
  /**
   * Milliseconds between the rounds that retry the Redis revocations (deactivations, session
   * revocations) Redis refused (PENDING_REVOCATION_INTERVAL_MS): a deactivated developer or a
   * revoked session stays signed in that long after Redis is back.
   */
  readonly pendingRevocationIntervalMs: number;
}

export interface CustomerSessionSettings {
  /** Seconds a session lives after its last refresh (or its creation). */
  readonly idleTtl: number;
  /** Seconds a session may live from its creation, however often it refreshes; null: no cap. */
  readonly absoluteTtl: number | null;
  /** Seconds in which the last rotated refresh token answers its successor again; 0: never. */
  readonly refreshReuseInterval: number;
}

export type MailConfig =
  | Readonly<{ transport: 'smtp'; smtpUrl: string; from: string }>
  | Readonly<{ transport: 'log'; from: string }>
  | Readonly<{ transport: 'none' }>;

export interface RateLimitBudget {
  readonly limit: number;
  readonly windowSeconds: number;
}

/**
 * Every endpoint an anonymous client can call that writes state, each with its own per-IP budget
 * checked before anything is written (contract section 10), and the variable that sets it.
 */
export const ANONYMOUS_WRITES = {
  authorize: 'RATE_LIMIT_IP_AUTHORIZE',
  'console-start': 'RATE_LIMIT_IP_CONSOLE_START',
  'chat-start': 'RATE_LIMIT_IP_CHAT_START',
  // Contract 14: GET|POST providers/{id}/start and providers/go write a state; providers/{id}/token a proof.
  'provider-start': 'RATE_LIMIT_IP_PROVIDER_START',
  'provider-token': 'RATE_LIMIT_IP_PROVIDER_TOKEN',
  'email-start': 'RATE_LIMIT_IP_EMAIL_START',
  'email-verify': 'RATE_LIMIT_IP_EMAIL_VERIFY',
  'guest-create': 'RATE_LIMIT_IP_GUEST_CREATE',
  'sign-in': 'RATE_LIMIT_IP_SIGN_IN',
  // A guest bearer is free to get, so the linking intent (a flow and an intent) counts as anonymous.
  'linking-intent': 'RATE_LIMIT_IP_LINKING_INTENT',
} as const;
export type AnonymousWrite = keyof typeof ANONYMOUS_WRITES;

/**
 * The coarse networks around a client's own (IPv4 /32, IPv6 /64), each with a budget of its own
 * that every anonymous write takes too, so a spread of addresses over a /24 or a routed /48 does
 * not multiply the per-network budget (contract section 10). Coarser tiers are looser.
 */
export const COARSE_NETWORK_TIERS = {
  'ipv4-24': 'RATE_LIMIT_NET_IPV4_24',
  'ipv6-56': 'RATE_LIMIT_NET_IPV6_56',
  'ipv6-48': 'RATE_LIMIT_NET_IPV6_48',
} as const;
export type CoarseNetworkTier = keyof typeof COARSE_NETWORK_TIERS;

export interface RateLimitConfig {
  readonly enabled: boolean;
  /** Per client network (IPv4 address or IPv6 /64), across tenants. */
  readonly ip: Readonly<Record<AnonymousWrite, RateLimitBudget>>;
  /** Per coarse network, for each anonymous write apart (the same budget for every write). */
  readonly networkTiers: Readonly<Record<CoarseNetworkTier, RateLimitBudget>>;
  /** Guest creation per tenant, across every network: a ceiling for spread floods. */
  readonly guestCreateTenant: RateLimitBudget;
  /** Linking intents per guest session. */
  readonly linkingIntentSession: RateLimitBudget;
  /** Codes sent to one address from one network (per realm). */
  readonly managementEmailSend: RateLimitBudget;
  readonly managementIp: RateLimitBudget;
  readonly managementFlowAttempts: RateLimitBudget;
  readonly guestCreateClientIp: RateLimitBudget;
  readonly guestCreateTenantIp: RateLimitBudget;
  readonly guestUpgradeSubject: RateLimitBudget;
  readonly tenantEmailSend: RateLimitBudget;
  /** Code attempts per tenant browser flow (the control plane's flows count in managementFlowAttempts). */
  readonly tenantFlowAttempts: RateLimitBudget;
  /** Codes sent to one address within one flow: resends. */
  readonly emailSendFlow: RateLimitBudget;
  /**
   * Fresh codes for one address in all, for flows that hold no live code for it: each buys
   * EMAIL_CODE_MAX_ATTEMPTS guesses, which resends keep, so this bounds guessing per address.
   */
  readonly emailSendAddress: RateLimitBudget;
}

/**
 * One line however many problems: a container runtime and a log pipeline keep each line of stderr
 * as a record of its own, and a bare "invalid configuration:" line above a list said nothing.
 */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Spec lifetimes: configuration may shorten them, never lengthen them. */
const SPEC_TTL = {
  MANAGEMENT_ACCESS_TOKEN_TTL: 300,
  EMAIL_CODE_TTL: 600,
  EMAIL_CODE_MAX_ATTEMPTS: 5,
  CONSOLE_SESSION_IDLE_TTL: 28_800,
  CONSOLE_SESSION_ABSOLUTE_TTL: 86_400,
  GUEST_ACCESS_TOKEN_TTL: 300,
  UPGRADE_PROOF_TTL: 300,
  PROVIDER_PROOF_TTL: 300,
  LINKING_INTENT_TTL: 600,
  /** A control-plane session ends with the console session it serves (spec 8: absolute 24 h). */
  CONTROL_PLANE_SESSION_TTL: 86_400,
} as const;

/** Production defaults; a burst of a few hundred guest creations from one IP is throttled. */
const RATE_LIMIT_DEFAULTS: Record<string, string> = {
  RATE_LIMIT_MGMT_EMAIL_SEND: '3/3600',
  RATE_LIMIT_MGMT_IP: '60/900',
  RATE_LIMIT_MGMT_FLOW_ATTEMPTS: '20/3600',
  RATE_LIMIT_GUEST_CREATE_CLIENT_IP: '100/60',
  RATE_LIMIT_GUEST_CREATE_TENANT_IP: '200/60',
  RATE_LIMIT_GUEST_UPGRADE_SUBJECT: '10/600',
  RATE_LIMIT_TENANT_EMAIL_SEND: '3/3600',
  RATE_LIMIT_TENANT_FLOW_ATTEMPTS: '20/3600',
  RATE_LIMIT_EMAIL_SEND_FLOW: '3/3600',
  // At most 100 wrong guesses an hour per address (OWASP ASVS V2.2.1): see emailGuessBound.
  RATE_LIMIT_EMAIL_SEND_ADDRESS: '6/3600',
  // Contract section 10: a burst of a few hundred anonymous writes from one network in a minute.
  ...Object.fromEntries(Object.values(ANONYMOUS_WRITES).map((name) => [name, '300/60'])),
  // A player links a credential once; a network needs few intents a minute.
  RATE_LIMIT_IP_LINKING_INTENT: '60/60',
  RATE_LIMIT_LINKING_INTENT_SESSION: '10/600',
  // Coarser tiers are looser (shared by more clients), and still stop a burst of a few hundred.
  RATE_LIMIT_NET_IPV4_24: '600/60',
  RATE_LIMIT_NET_IPV6_56: '450/60',
  RATE_LIMIT_NET_IPV6_48: '600/60',
  RATE_LIMIT_GUEST_CREATE_TENANT: '6000/60',
};

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  /** Reads NAME, or the file named by NAME_FILE for secrets. Never records the value. */
  raw(name: string, opts: { secret?: boolean } = {}): string | undefined {
    const direct = this.env[name];
    const file = opts.secret ? this.env[`${name}_FILE`] : undefined;
    if (direct !== undefined && direct !== '' && file) {
      this.problems.push(`${name}: set either ${name} or ${name}_FILE, not both`);
      return undefined;
    }
    if (file) {
      let value: string;
      try {
        value = readFileSync(file, 'utf8').trim();
      } catch {
        this.problems.push(`${name}_FILE: cannot read the file it names`);
        return undefined;
      }
      // An unset variable written to the file (`echo "$UNSET" > file`) must not pass as a secret.
      if (value === '') this.problems.push(`${name}_FILE: the file it names is empty`);
      return value === '' ? undefined : value;
    }
    return direct === '' ? undefined : direct;
  }

  required(name: string, opts: { secret?: boolean } = {}): string {
    const known = this.problems.length;
    const v = this.raw(name, opts);
    // Given twice, or in a file that cannot be read: that problem alone, not "required" as well.
    if (v === undefined && this.problems.length === known) this.problems.push(`${name}: required`);
    return v ?? '';
  }

  origin(name: string): string {
    const v = this.required(name);
    if (!v) return '';
    if (!URL.canParse(v)) this.problems.push(`${name}: not a URL`);
    else if (httpUrl(v)?.origin !== v)
      this.problems.push(`${name}: must be a bare origin such as https://auth.example.com`);
    return v;
  }

  /**
   * A dependency's URL, a secret since it may carry a password, parsed as its client will parse it.
   * A value the client cannot read would otherwise stop start-up inside the library, whose error
   * names no variable and prints the whole value, password included.
   */
  dependencyUrl(
    name: string,
    protocols: readonly string[],
    parse: (text: string) => URL | null,
  ): { text: string; url: URL | null } {
    const text = this.required(name, { secret: true });
    const parsed = text ? parse(text) : null;
    const url = parsed && protocols.includes(parsed.protocol) && !unescapedPassword(parsed) ? parsed : null;
    if (text && !url) {
      const shapes = protocols.map((p) => `${p}//`).join(' or ');
      this.problems.push(`${name}: must be a ${shapes} URL (a numeric port; @ : / % in a password %-escaped)`);
    }
    return { text, url };
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      this.problems.push(`${name}: must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return Number(v);
  }

  ttl(name: keyof typeof SPEC_TTL): number {
    return this.int(name, SPEC_TTL[name], 1, SPEC_TTL[name]);
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (v !== 'true' && v !== 'false') {
      this.problems.push(`${name}: must be true or false`);
      return fallback;
    }
    return v === 'true';
  }

  budget(name: string): RateLimitBudget {
    const v = this.raw(name) ?? RATE_LIMIT_DEFAULTS[name] ?? '';
    const m = /^(\d+)\/(\d+)$/.exec(v);
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
      this.problems.push(`${name}: must look like LIMIT/WINDOW_SECONDS, for example 5/900`);
      return { limit: 1, windowSeconds: 1 };
    }
    return { limit: Number(m[1]), windowSeconds: Number(m[2]) };
  }

  /**
   * A comma-separated list of keys (contract 12): the first seals and digests, all open and
   * verify, so a key rotates without signing anyone out.
   */
  keyList(name: string, exactBytes: number | null, minBytes: number): Buffer[] {
    const v = this.required(name, { secret: true });
    if (!v) return [Buffer.alloc(0)];
    return v.split(',').map((item, i) => {
      const label = v.includes(',') ? `${name} (key ${i + 1})` : name;
      const isB64url = /^[A-Za-z0-9_-]+$/.test(item);
      const buf = isB64url ? Buffer.from(item, 'base64url') : Buffer.from(item, 'utf8');
      if (exactBytes !== null && (!isB64url || buf.length !== exactBytes)) {
        this.problems.push(`${label}: must be base64url of exactly ${exactBytes} random bytes`);
      } else if (buf.length < minBytes) {
        this.problems.push(`${label}: must hold at least ${minBytes} bytes`);
      }
      return buf;
    });
  }
}

/** A WHATWG URL whose user and password %-decode, as ioredis and nodemailer need them to. */
function decodableUrl(text: string): URL | null {
  const url = URL.parse(text);
  try {
    if (url) decodeURIComponent(url.username + url.password);
    return url;
  } catch {
    return null;
  }
}

/**
 * As DATABASE_URL is read: an empty host gets a stand-in (`user:password@/db?host=/run/postgresql`
 * names a Unix socket, which pg reads). TypeORM splits the URL itself before pg does and
 * %-decodes the user and password, so a % that does not decode threw "URI malformed" from inside
 * it, naming no variable: refused here like the other URLs.
 */
function pgUrl(text: string): URL | null {
  return decodableUrl(text) ?? decodableUrl(text.replace('@/', '@localhost/'));
}

/**
 * A password with an unescaped @ and then / (`user:p@ss/word@db/auth`) parses as a URL whose host
 * is a piece of the password, and the client's "cannot resolve" error then printed that piece. A
 * database path holds no @, so one there is taken for such a password.
 */
function unescapedPassword(url: URL): boolean {
  return url.pathname.includes('@');
}

/** Runs one reader over the environment and throws every problem it found at once. */
function readPart<T>(env: Env, read: (r: Reader) => T): T {
  const r = new Reader(env);
  const value = read(r);
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return value;
}

export type DatabaseSettings = Pick<AppConfig, 'databaseUrl' | 'dependencyTimeoutMs'>;
export type RedisSettings = Pick<
  AppConfig,
  'redisUrl' | 'redisClusterNodes' | 'redisKeyPrefix' | 'dependencyTimeoutMs'
>;
export type ConsoleClientSettings = Pick<
  AppConfig,
  'consoleOrigin' | 'consoleClientId' | 'consoleClientSecret' | 'consoleClientSecrets'
>;

function readTimeout(r: Reader): number {
  return r.int('DEPENDENCY_TIMEOUT_MS', 2000, 100, 30_000);
}

function readDatabase(r: Reader): DatabaseSettings {
  const { text: databaseUrl } = r.dependencyUrl('DATABASE_URL', ['postgres:', 'postgresql:'], pgUrl);
  return { databaseUrl, dependencyTimeoutMs: readTimeout(r) };
}

/**
 * The database REDIS_URL names, as ioredis reads it: the path, else `?db=`; '' for none. Redis
 * takes an index below its `databases` setting (16 by default, at most 2^31 - 1); whether the
 * server has it is only known once connected (RedisModule checks).
 */
function redisDatabase(r: Reader, url: URL | null): string {
  const db = url ? url.pathname.slice(1) || (url.searchParams.get('db') ?? '') : '';
  if (db && !(/^(0|[1-9]\d{0,9})$/.test(db) && Number(db) < 2 ** 31 - 1))
    r.problems.push('REDIS_URL: its path must name a database by number, /0 to /15 on a default Redis');
  return db;
}

function readRedis(r: Reader): RedisSettings {
  const { text: redisUrl, url } = r.dependencyUrl('REDIS_URL', ['redis:', 'rediss:'], decodableUrl);
  const db = redisDatabase(r, url);
  const clusterRaw = r.raw('REDIS_CLUSTER_NODES');
  const redisClusterNodes = clusterRaw
    ? clusterRaw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
  if (redisClusterNodes.some((n) => !/^[^:\s]+:\d+$/.test(n))) {
    r.problems.push('REDIS_CLUSTER_NODES: must be a comma-separated list of host:port');
  }
  // With a cluster, REDIS_URL lends only its credentials and TLS to every node (clusterNodeAuth).
  if (redisClusterNodes.length > 0 && db !== '' && db !== '0')
    r.problems.push('REDIS_URL: a Redis Cluster has only database 0; name none (or /0) with REDIS_CLUSTER_NODES');
  return {
    redisUrl,
    redisClusterNodes,
    redisKeyPrefix: r.raw('REDIS_KEY_PREFIX') ?? 'svc:',
    dependencyTimeoutMs: readTimeout(r),
  };
}

function readConsoleClient(r: Reader): ConsoleClientSettings {
  const consoleOrigin = r.origin('CONSOLE_ORIGIN');
  const consoleClientId = r.required('CONSOLE_CLIENT_ID');
  if (consoleClientId && !/^cli_[A-Za-z0-9_-]{1,64}$/.test(consoleClientId)) {
    r.problems.push('CONSOLE_CLIENT_ID: must match ^cli_[A-Za-z0-9_-]{1,64}$');
  }
  // A list only during a rotation's overlap (docs/operations.md): the first is presented, all verify.
  const raw = r.required('CONSOLE_CLIENT_SECRET', { secret: true });
  const consoleClientSecrets = raw ? raw.split(',') : [''];
  if (raw && consoleClientSecrets.some((s) => s.length < 32)) {
    r.problems.push('CONSOLE_CLIENT_SECRET: must be at least 32 characters of random data');
  }
  return { consoleOrigin, consoleClientId, consoleClientSecret: consoleClientSecrets[0] ?? '', consoleClientSecrets };
}

function readAuditRetention(r: Reader): number {
  return r.int('AUDIT_RETENTION_DAYS', 365, 1, 36_500);
}

/**
 * Where the console BFF reaches the API (default AUTH_ORIGIN). The BFF puts each API path right
 * after it, so a trailing slash is dropped (it made `//management/…`, a 404 for every console
 * view), and a path, query or fragment, which would land in front of every path, is refused.
 */
function readAuthInternalUrl(r: Reader, authOrigin: string): string {
  const v = r.raw('AUTH_INTERNAL_URL');
  const url = v === undefined ? null : httpUrl(v);
  if (url && url.href !== `${url.origin}/`)
    r.problems.push('AUTH_INTERNAL_URL: must be a bare origin such as https://svc-auth.internal:3443');
  return url?.origin ?? v ?? authOrigin;
}

/** An IP address to listen on (HOST, METRICS_HOST), such as 127.0.0.1 behind a local proxy. */
function readHost(r: Reader, name = 'HOST'): string | null {
  const host = r.raw(name);
  if (host === undefined) return null;
  if (!isIP(host)) r.problems.push(`${name}: must be an IP address to listen on, such as 127.0.0.1 or ::`);
  return host;
}

/**
 * How many proxies append to X-Forwarded-For in front of the service: the client is the entry that
 * many hops from the right (contract section 10: a client never chooses its own budget subject).
 * TRUST_PROXY_HOPS without TRUST_PROXY=true is a mistake worth naming, not a silent no-op.
 */
function readTrustProxy(r: Reader): number {
  const trusted = r.bool('TRUST_PROXY', false);
  const hops = r.int('TRUST_PROXY_HOPS', 1, 1, 10);
  if (!trusted && r.raw('TRUST_PROXY_HOPS') !== undefined) {
    r.problems.push('TRUST_PROXY_HOPS: needs TRUST_PROXY=true');
  }
  return trusted ? hops : 0;
}

function readGuestRetention(r: Reader): number {
  return r.int('GUEST_RETENTION_DAYS', 7, 0, 36_500);
}

/**
 * Contract 13: customer sessions are not spec lifetimes, so any positive number is accepted. A
 * guest who never linked a credential has nothing but its session: the defaults keep a player who
 * comes back within three months, and a retry or a second tab within 30 s keeps the session.
 */
function readCustomerSessions(r: Reader): CustomerSessionSettings {
  const absolute = r.raw('CUSTOMER_SESSION_ABSOLUTE_TTL');
  return {
    idleTtl: r.int('CUSTOMER_SESSION_IDLE_TTL', 7_776_000, 1, 2 ** 31 - 1),
    absoluteTtl: absolute === undefined ? null : r.int('CUSTOMER_SESSION_ABSOLUTE_TTL', 0, 1, 2 ** 31 - 1),
    refreshReuseInterval: r.int('REFRESH_REUSE_INTERVAL', 30, 0, 3600),
  };
}

/** DATABASE_URL alone: what the admin CLI's PostgreSQL-only commands need (contract 12). */
export function loadDatabaseSettings(env: Env): DatabaseSettings {
  return readPart(env, readDatabase);
}

export function loadRedisSettings(env: Env): RedisSettings {
  return readPart(env, readRedis);
}

export function loadPrivacyKeys(env: Env): readonly Buffer[] {
  return readPart(env, (r) => r.keyList('PRIVACY_KEY', null, 32));
}

export function loadConsoleClientSettings(env: Env): ConsoleClientSettings {
  return readPart(env, readConsoleClient);
}

export function loadAuditRetentionDays(env: Env): number {
  return readPart(env, readAuditRetention);
}

export function loadGuestRetentionDays(env: Env): number {
  return readPart(env, readGuestRetention);
}

function parseSigningKeys(r: Reader): JWK[] {
  const v = r.required('SIGNING_KEYS', { secret: true });
  if (!v) return [];
  let keys: unknown;
  try {
    keys = (JSON.parse(v) as { keys?: unknown }).keys;
  } catch {
    r.problems.push('SIGNING_KEYS: not a JSON JWK Set');
    return [];
  }
  if (!Array.isArray(keys) || keys.length === 0) {
    r.problems.push('SIGNING_KEYS: must be a JWK Set with a non-empty "keys" array');
    return [];
  }
  const jwks = keys as JWK[];
  const kids = new Set<string>();
  jwks.forEach((k, i) => {
    const ok =
      typeof k.kid === 'string' &&
      k.kid.length > 0 &&
      ((k.alg === 'RS256' && k.kty === 'RSA' && typeof k.d === 'string') ||
        (k.alg === 'ES256' && k.kty === 'EC' && k.crv === 'P-256' && typeof k.d === 'string'));
    if (!ok) r.problems.push(`SIGNING_KEYS: key ${i} must be a private RS256 (RSA) or ES256 (P-256) JWK with a kid`);
    else if (kids.has(k.kid as string)) r.problems.push(`SIGNING_KEYS: key ${i} repeats a kid`);
    else kids.add(k.kid as string);
  });
  if (!jwks.some((k) => k.alg === 'RS256')) r.problems.push('SIGNING_KEYS: needs an RS256 key for the control plane');
  if (!jwks.some((k) => k.alg === 'ES256')) r.problems.push('SIGNING_KEYS: needs an ES256 key for customer tokens');
  return jwks;
}

/**
 * The sender: `name@host` or `Display Name <name@host>`, the host possibly a bare name (a relay on a
 * private network). Anything else leaves nodemailer's envelope sender empty (`MAIL FROM:<>`), which
 * relays refuse, and every code mail would fail.
 */
const SENDER = /^(?:[^<>]*<)?([^\s"<>()[\]\\,;:@]+@[^\s"<>()[\]\\,;:@]+)(?:>)?$/;

function mailFrom(r: Reader, from: string): string {
  const m = SENDER.exec(from.trim());
  // Brackets must pair: `name@host>` and `Name <name@host` are refused too.
  const paired = m !== null && from.trim().endsWith('>') === from.includes('<');
  if (from && !paired) r.problems.push('MAIL_FROM: must be an address, name@host or "Display Name <name@host>"');
  return from;
}

function parseMail(r: Reader, nodeEnv: AppConfig['nodeEnv']): MailConfig {
  const transport = r.raw('MAIL_TRANSPORT') ?? 'none';
  switch (transport) {
    case 'smtp': {
      const { text: smtpUrl } = r.dependencyUrl('SMTP_URL', ['smtp:', 'smtps:'], decodableUrl);
      return { transport: 'smtp', smtpUrl, from: mailFrom(r, r.required('MAIL_FROM')) };
    }
    case 'log':
      if (nodeEnv === 'production') r.problems.push('MAIL_TRANSPORT: "log" is refused when NODE_ENV=production');
      return { transport: 'log', from: mailFrom(r, r.raw('MAIL_FROM') ?? 'svc-auth@localhost') };
    case 'none':
      return { transport: 'none' };
    default:
      r.problems.push('MAIL_TRANSPORT: must be smtp, log or none');
      return { transport: 'none' };
  }
}

function readNodeEnv(r: Reader): AppConfig['nodeEnv'] {
  const nodeEnvRaw = r.raw('NODE_ENV') ?? 'production';
  if (!['production', 'development', 'test'].includes(nodeEnvRaw)) {
    r.problems.push('NODE_ENV: must be production, development or test');
  }
  return nodeEnvRaw as AppConfig['nodeEnv'];
}

/** NODE_ENV alone (default production, as the service): the admin CLI's `client create` reads it. */
export function loadNodeEnv(env: Env): AppConfig['nodeEnv'] {
  return readPart(env, readNodeEnv);
}

/**
 * Issue 22, point 6: in production, every URL that carries a secret or a credentialed origin uses
 * https, loopback apart (src/config/secure-transport.ts). A URL no other check reads must also be
 * an http(s) URL in any mode (`shaped`: the origins have their own shape check).
 */
function checkTransport(
  r: Reader,
  nodeEnv: AppConfig['nodeEnv'],
  urls: Readonly<Record<string, string>>,
  shaped: boolean,
): void {
  for (const [name, value] of Object.entries(urls)) {
    if (!value) continue;
    const url = httpUrl(value);
    if (!url) {
      if (!shaped) r.problems.push(`${name}: must be an http(s) URL`);
    } else if (nodeEnv === 'production' && isCleartextOverNetwork(url)) {
      r.problems.push(`${name}: ${HTTPS_IN_PRODUCTION}`);
    }
  }
}

export function loadConfig(env: Env): AppConfig {
  const r = new Reader(env);
  const nodeEnv = readNodeEnv(r);
  const authOrigin = r.origin('AUTH_ORIGIN');
  const consoleClient = readConsoleClient(r);
  const consoleOrigin = consoleClient.consoleOrigin;
  // Contract section 10: cookies ignore ports, so one host name for both would let the auth
  // host's and the console's `__Host-svc_control_flow` cookies overwrite each other.
  const authHostname = URL.parse(authOrigin)?.hostname;
  if (authHostname && authHostname === URL.parse(consoleOrigin)?.hostname)
    r.problems.push('CONSOLE_ORIGIN: must have another host name than AUTH_ORIGIN (cookies ignore ports)');
  const authInternalUrl = readAuthInternalUrl(r, authOrigin);
  const chatPlatform = {
    authorizeUrl: r.raw('CHAT_PLATFORM_AUTHORIZE_URL') ?? 'https://discord.com/oauth2/authorize',
    apiBase: (r.raw('CHAT_PLATFORM_API_BASE') ?? 'https://discord.com/api/v10').replace(/\/$/, ''),
  };
  checkTransport(r, nodeEnv, { AUTH_ORIGIN: authOrigin, CONSOLE_ORIGIN: consoleOrigin }, true);
  checkTransport(
    r,
    nodeEnv,
    {
      // Its default, AUTH_ORIGIN, is checked above.
      AUTH_INTERNAL_URL: r.raw('AUTH_INTERNAL_URL') ?? '',
      CHAT_PLATFORM_AUTHORIZE_URL: chatPlatform.authorizeUrl,
      CHAT_PLATFORM_API_BASE: chatPlatform.apiBase,
    },
    false,
  );

  const database = readDatabase(r);
  const redis = readRedis(r);
  const consoleSessionKeys = r.keyList('CONSOLE_SESSION_KEY', 32, 32);
  const privacyKeys = r.keyList('PRIVACY_KEY', null, 32);

  const rateLimitsRaw = r.raw('RATE_LIMITS') ?? 'on';
  if (rateLimitsRaw !== 'on' && rateLimitsRaw !== 'off') r.problems.push('RATE_LIMITS: must be on or off');
  if (rateLimitsRaw === 'off' && nodeEnv === 'production') {
    r.problems.push('RATE_LIMITS: "off" is refused when NODE_ENV=production');
  }

  const config: AppConfig = {
    nodeEnv,
    // 0 would let the kernel pick a port nobody (the container's health check, the proxy) knows.
    port: r.int('PORT', 3000, 1, 65535),
    host: readHost(r),
    metricsPort: r.raw('METRICS_PORT') === undefined ? null : r.int('METRICS_PORT', 9464, 0, 65535),
    metricsHost: readHost(r, 'METRICS_HOST') ?? '127.0.0.1',
    authOrigin,
    authInternalUrl,
    trustProxy: readTrustProxy(r),
    ...database,
    ...redis,
    ...consoleClient,
    consoleSessionKey: consoleSessionKeys[0] ?? Buffer.alloc(0),
    consoleSessionKeys,
    privacyKey: privacyKeys[0] ?? Buffer.alloc(0),
    privacyKeys,
    auditRetentionDays: readAuditRetention(r),
    guestRetentionDays: readGuestRetention(r),
    customerSessions: readCustomerSessions(r),
    signingKeys: parseSigningKeys(r),
    ttl: {
      managementAccessToken: r.ttl('MANAGEMENT_ACCESS_TOKEN_TTL'),
      emailCode: r.ttl('EMAIL_CODE_TTL'),
      emailCodeMaxAttempts: r.ttl('EMAIL_CODE_MAX_ATTEMPTS'),
      consoleSessionIdle: r.ttl('CONSOLE_SESSION_IDLE_TTL'),
      consoleSessionAbsolute: r.ttl('CONSOLE_SESSION_ABSOLUTE_TTL'),
      guestAccessToken: r.ttl('GUEST_ACCESS_TOKEN_TTL'),
      upgradeProof: r.ttl('UPGRADE_PROOF_TTL'),
      providerProof: r.ttl('PROVIDER_PROOF_TTL'),
      linkingIntent: r.ttl('LINKING_INTENT_TTL'),
      controlPlaneSession: r.ttl('CONTROL_PLANE_SESSION_TTL'),
    },
    rateLimits: {
      enabled: rateLimitsRaw !== 'off',
      ip: Object.fromEntries(
        Object.entries(ANONYMOUS_WRITES).map(([endpoint, name]) => [endpoint, r.budget(name)]),
      ) as Record<AnonymousWrite, RateLimitBudget>,
      networkTiers: Object.fromEntries(
        Object.entries(COARSE_NETWORK_TIERS).map(([tier, name]) => [tier, r.budget(name)]),
      ) as Record<CoarseNetworkTier, RateLimitBudget>,
      guestCreateTenant: r.budget('RATE_LIMIT_GUEST_CREATE_TENANT'),
      linkingIntentSession: r.budget('RATE_LIMIT_LINKING_INTENT_SESSION'),
      managementEmailSend: r.budget('RATE_LIMIT_MGMT_EMAIL_SEND'),
      managementIp: r.budget('RATE_LIMIT_MGMT_IP'),
      managementFlowAttempts: r.budget('RATE_LIMIT_MGMT_FLOW_ATTEMPTS'),
      guestCreateClientIp: r.budget('RATE_LIMIT_GUEST_CREATE_CLIENT_IP'),
      guestCreateTenantIp: r.budget('RATE_LIMIT_GUEST_CREATE_TENANT_IP'),
      guestUpgradeSubject: r.budget('RATE_LIMIT_GUEST_UPGRADE_SUBJECT'),
      tenantEmailSend: r.budget('RATE_LIMIT_TENANT_EMAIL_SEND'),
      tenantFlowAttempts: r.budget('RATE_LIMIT_TENANT_FLOW_ATTEMPTS'),
      emailSendFlow: r.budget('RATE_LIMIT_EMAIL_SEND_FLOW'),
      emailSendAddress: r.budget('RATE_LIMIT_EMAIL_SEND_ADDRESS'),
    },
    clientCacheTtlMs: r.int('CLIENT_CACHE_TTL_MS', 5_000, 100, 5_000),
    pendingRevocationIntervalMs: r.int('PENDING_REVOCATION_INTERVAL_MS', 5_000, 100, 600_000),
    mail: parseMail(r, nodeEnv),
    chatPlatform,
    logLevel: readLogLevel(r),
  };
  // Settings shared by several parts (DEPENDENCY_TIMEOUT_MS) are read more than once.
  if (r.problems.length > 0) throw new ConfigError([...new Set(r.problems)]);
  return config;
}

/**
 * Contract 10: one client network cannot spend the address budget of another. A refused send
 * costs nothing, so a network polls for free; should its own budget for an address hold as many
 * codes as the address's, or refill as fast, it would take every code the address's budget
 * refills and lock the address's owner out of new sign-ins from anywhere. The defaults keep to
 * this (test/unit/config.spec.ts); an operator who changes either budget should too.
 */
export function leavesAddressBudgetToOthers(network: RateLimitBudget, address: RateLimitBudget): boolean {
  return network.limit < address.limit && network.limit * address.windowSeconds < address.limit * network.windowSeconds;
}

/** pino's levels; pino itself refuses another with a message that does not name the variable. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function readLogLevel(r: Reader): string {
  const level = r.raw('LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    r.problems.push(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

/** Import check of the signing keys; separate because jose's import is async. */
export async function assertKeysUsable(config: AppConfig): Promise<void> {
  for (const [i, jwk] of config.signingKeys.entries()) {
    try {
      await importJWK(jwk, jwk.alg);
    } catch {
      throw new ConfigError([`SIGNING_KEYS: key ${i} cannot be imported`]);
    }
  }
}

export const APP_CONFIG = Symbol('APP_CONFIG');
