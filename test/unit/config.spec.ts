import { unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ConfigError, leavesAddressBudgetToOthers, loadConfig } from '../../src/config/config';
import {
  CONFIG_SECRET_VALUE as SECRET_VALUE,
  configProblems as problemsOf,
  localConfigEnv as env,
} from '../support/config-env';

const rsa = { kty: 'RSA', alg: 'RS256', kid: 'r1', n: 'x', e: 'AQAB', d: 'y' };
const ec = { kty: 'EC', crv: 'P-256', alg: 'ES256', kid: 'e1', x: 'x', y: 'y', d: 'z' };

describe('configuration (contract section 1)', () => {
  it('accepts a complete environment with spec defaults', () => {
    const c = loadConfig(env());
    expect(c.port).toBe(3000);
    expect(c.ttl).toEqual({
      managementAccessToken: 300,
      emailCode: 600,
      emailCodeMaxAttempts: 5,
      consoleSessionIdle: 28800,
      consoleSessionAbsolute: 86400,
      guestAccessToken: 300,
      upgradeProof: 300,
      providerProof: 300,
      linkingIntent: 600,
      controlPlaneSession: 86400,
    });
    expect(c.customerSessions).toEqual({ idleTtl: 7_776_000, absoluteTtl: null, refreshReuseInterval: 30 });
    expect(c.guestRetentionDays).toBe(7);
    expect(c.rateLimits.enabled).toBe(true);
  });

  it.each([
    'AUTH_ORIGIN',
    'CONSOLE_ORIGIN',
    'DATABASE_URL',
    'REDIS_URL',
    'CONSOLE_CLIENT_ID',
    'CONSOLE_CLIENT_SECRET',
    'CONSOLE_SESSION_KEY',
    'PRIVACY_KEY',
    'SIGNING_KEYS',
  ])('names a missing %s', (name) => {
    expect(problemsOf(env({ [name]: undefined }))).toContain(`${name}: required`);
  });

  it('never prints a secret value in its messages', () => {
    const e = env({ CONSOLE_SESSION_KEY: SECRET_VALUE, PRIVACY_KEY: 'short', AUTH_ORIGIN: 'not a url' });
    try {
      loadConfig(e);
      throw new Error('expected failure');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).not.toContain(SECRET_VALUE);
      expect((err as Error).message).not.toContain('short');
      expect((err as ConfigError).problems.map((p) => p.split(':')[0])).toEqual([
        'AUTH_ORIGIN',
        'CONSOLE_SESSION_KEY',
        'PRIVACY_KEY',
      ]);
    }
  });

  it('reads secrets from NAME_FILE', () => {
    const path = `${tmpdir()}/svc-cfg-${process.pid}`;
    writeFileSync(path, `${SECRET_VALUE}-from-file\n`);
    const c = loadConfig(env({ CONSOLE_CLIENT_SECRET: undefined, CONSOLE_CLIENT_SECRET_FILE: path }));
    expect(c.consoleClientSecret).toBe(`${SECRET_VALUE}-from-file`);
    unlinkSync(path);
  });

  it('names one problem for a secret given twice, or in a file it cannot read, not "required" as well', () => {
    const path = `${tmpdir()}/svc-cfg-both-${process.pid}`;
    writeFileSync(path, `${SECRET_VALUE}-from-file\n`);
    try {
      expect(problemsOf(env({ CONSOLE_CLIENT_SECRET_FILE: path }))).toEqual([
        'CONSOLE_CLIENT_SECRET: set either CONSOLE_CLIENT_SECRET or CONSOLE_CLIENT_SECRET_FILE, not both',
      ]);
    } finally {
      unlinkSync(path);
    }
    expect(problemsOf(env({ PRIVACY_KEY: undefined, PRIVACY_KEY_FILE: `${path}-missing` }))).toEqual([
      'PRIVACY_KEY_FILE: cannot read the file it names',
    ]);
  });

  // An unset variable written to a secret's file (`echo "$UNSET" > file`) holds only a line break.
  it.each(['PRIVACY_KEY', 'CONSOLE_CLIENT_SECRET', 'CONSOLE_SESSION_KEY', 'SIGNING_KEYS', 'DATABASE_URL', 'REDIS_URL'])(
    'refuses %s_FILE naming an empty file',
    (name) => {
      const path = `${tmpdir()}/svc-cfg-empty-${process.pid}`;
      writeFileSync(path, '\n');
      try {
        expect(problemsOf(env({ [name]: undefined, [`${name}_FILE`]: path }))).toEqual([
          `${name}_FILE: the file it names is empty`,
        ]);
      } finally {
        unlinkSync(path);
      }
    },
  );

  it('refuses lifetimes longer than the spec but accepts shorter ones', () => {
    expect(problemsOf(env({ EMAIL_CODE_TTL: '601' }))).toEqual(['EMAIL_CODE_TTL: must be an integer from 1 to 600']);
    expect(loadConfig(env({ EMAIL_CODE_TTL: '30' })).ttl.emailCode).toBe(30);
    expect(problemsOf(env({ CONTROL_PLANE_SESSION_TTL: '86401' }))).toEqual([
      'CONTROL_PLANE_SESSION_TTL: must be an integer from 1 to 86400',
    ]);
  });

  it('trusts cached client rows 5 s by default; CLIENT_CACHE_TTL_MS may shorten that, never lengthen it', () => {
    expect(loadConfig(env()).clientCacheTtlMs).toBe(5_000);
    expect(loadConfig(env({ CLIENT_CACHE_TTL_MS: '300' })).clientCacheTtlMs).toBe(300);
    expect(problemsOf(env({ CLIENT_CACHE_TTL_MS: '5001' }))).toEqual([
      'CLIENT_CACHE_TTL_MS: must be an integer from 100 to 5000',
    ]);
  });

  it('retries pending revocations every 5 s by default; PENDING_REVOCATION_INTERVAL_MS sets 100 ms to 10 min', () => {
    expect(loadConfig(env()).pendingRevocationIntervalMs).toBe(5_000);
    expect(loadConfig(env({ PENDING_REVOCATION_INTERVAL_MS: '250' })).pendingRevocationIntervalMs).toBe(250);
    expect(problemsOf(env({ PENDING_REVOCATION_INTERVAL_MS: '0' }))).toEqual([
      'PENDING_REVOCATION_INTERVAL_MS: must be an integer from 100 to 600000',
    ]);
  });

  it('listens on every interface unless HOST names an address (an IP)', () => {
    expect(loadConfig(env({})).host).toBeNull();
    expect(loadConfig(env({ HOST: '127.0.0.1' })).host).toBe('127.0.0.1');
    expect(loadConfig(env({ HOST: '::1' })).host).toBe('::1');
    expect(problemsOf(env({ HOST: 'localhost:3000' }))).toEqual([
      'HOST: must be an IP address to listen on, such as 127.0.0.1 or ::',
    ]);
  });

  it('refuses PORT=0, a port the kernel would pick and nobody (the health check, the proxy) would know', () => {
    expect(problemsOf(env({ PORT: '0' }))).toEqual([expect.stringMatching(/^PORT: /)]);
    expect(loadConfig(env({ PORT: '1' })).port).toBe(1);
  });

  it('accepts any positive customer session lifetime, and 0 to turn the reuse interval off (contract 13)', () => {
    const c = loadConfig(
      env({ CUSTOMER_SESSION_IDLE_TTL: '5', CUSTOMER_SESSION_ABSOLUTE_TTL: '31536000', REFRESH_REUSE_INTERVAL: '0' }),
    );
    expect(c.customerSessions).toEqual({ idleTtl: 5, absoluteTtl: 31_536_000, refreshReuseInterval: 0 });
    expect(problemsOf(env({ CUSTOMER_SESSION_IDLE_TTL: '0', CUSTOMER_SESSION_ABSOLUTE_TTL: 'never' }))).toEqual([
      'CUSTOMER_SESSION_IDLE_TTL: must be an integer from 1 to 2147483647',
      'CUSTOMER_SESSION_ABSOLUTE_TTL: must be an integer from 1 to 2147483647',
    ]);
    expect(loadConfig(env({ GUEST_RETENTION_DAYS: '0' })).guestRetentionDays).toBe(0);
  });

  it('requires CONSOLE_SESSION_KEY to be exactly 32 bytes of base64url', () => {
    expect(problemsOf(env({ CONSOLE_SESSION_KEY: Buffer.alloc(31).toString('base64url') }))).toEqual([
      'CONSOLE_SESSION_KEY: must be base64url of exactly 32 random bytes',
    ]);
  });

  it('names LOG_LEVEL when it is not one of the levels pino knows, and accepts each of them', () => {
    expect(problemsOf(env({ LOG_LEVEL: 'verbose' }))).toEqual([
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      expect(loadConfig(env({ LOG_LEVEL: level })).logLevel).toBe(level);
  });

  it('refuses a database other than 0 in REDIS_URL when REDIS_CLUSTER_NODES names a cluster', () => {
    const cluster = { REDIS_CLUSTER_NODES: '127.0.0.1:7101,127.0.0.1:7102' };
    expect(problemsOf(env({ ...cluster, REDIS_URL: 'redis://:pw@127.0.0.1:6379/3' }))).toEqual([
      'REDIS_URL: a Redis Cluster has only database 0; name none (or /0) with REDIS_CLUSTER_NODES',
    ]);
    for (const url of ['redis://127.0.0.1:6379', 'redis://:pw@127.0.0.1:6379/', 'rediss://u:pw@redis:6380/0'])
      expect(problemsOf(env({ ...cluster, REDIS_URL: url }))).toEqual([]);
    // A single server may use any database.
    expect(problemsOf(env({ REDIS_URL: 'redis://127.0.0.1:6379/3' }))).toEqual([]);
  });

  it('refuses RATE_LIMITS=off and MAIL_TRANSPORT=log in production', () => {
    expect(
      problemsOf(env({ NODE_ENV: 'production', RATE_LIMITS: 'off', MAIL_TRANSPORT: 'log' }))
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['MAIL_TRANSPORT', 'RATE_LIMITS']);
    expect(loadConfig(env({ NODE_ENV: 'development', RATE_LIMITS: 'off' })).rateLimits.enabled).toBe(false);
  });

  it('keeps the default per-network email budgets below the address budget (contract 10)', () => {
    const { managementEmailSend, tenantEmailSend, emailSendAddress } = loadConfig(env()).rateLimits;
    expect(leavesAddressBudgetToOthers(managementEmailSend, emailSendAddress)).toBe(true);
    expect(leavesAddressBudgetToOthers(tenantEmailSend, emailSendAddress)).toBe(true);
    // As many codes as the address allows, or refilled as fast: one network takes every code.
    const address = { limit: 6, windowSeconds: 3600 };
    expect(leavesAddressBudgetToOthers({ limit: 6, windowSeconds: 7200 }, address)).toBe(false);
    expect(leavesAddressBudgetToOthers({ limit: 5, windowSeconds: 900 }, address)).toBe(false);
    expect(leavesAddressBudgetToOthers({ limit: 5, windowSeconds: 3600 }, address)).toBe(true);
  });

  it('gives every anonymous write a per-network budget of a few hundred a minute by default', () => {
    const c = loadConfig(env({ RATE_LIMIT_IP_GUEST_CREATE: '7/30' }));
    expect(Object.keys(c.rateLimits.ip).sort()).toEqual([
      'authorize',
      'chat-start',
      'console-start',
      'email-start',
      'email-verify',
      'guest-create',
      'linking-intent',
      'provider-start',
      'provider-token',
      'sign-in',
    ]);
    expect(c.rateLimits.ip.authorize).toEqual({ limit: 300, windowSeconds: 60 });
    expect(c.rateLimits.ip['guest-create']).toEqual({ limit: 7, windowSeconds: 30 });
    expect(problemsOf(env({ RATE_LIMIT_IP_SIGN_IN: '0/60' }))[0]).toMatch(/^RATE_LIMIT_IP_SIGN_IN:/);
  });

  it('gives coarse networks looser budgets that still stop a burst of a few hundred a minute (contract 10)', () => {
    const c = loadConfig(env({ RATE_LIMIT_NET_IPV6_48: '9/90' }));
    const perMinute = (b: { limit: number; windowSeconds: number }) => (b.limit * 60) / b.windowSeconds;
    const d = loadConfig(env()).rateLimits;
    expect(perMinute(d.networkTiers['ipv4-24'])).toBeGreaterThan(perMinute(d.ip['guest-create']));
    expect(perMinute(d.networkTiers['ipv6-56'])).toBeGreaterThan(perMinute(d.ip['guest-create']));
    expect(perMinute(d.networkTiers['ipv6-48'])).toBeGreaterThan(perMinute(d.networkTiers['ipv6-56']));
    for (const b of Object.values(d.networkTiers)) expect(b.limit).toBeLessThanOrEqual(1000);
    expect(d.ip['linking-intent']).toEqual({ limit: 60, windowSeconds: 60 });
    expect(d.linkingIntentSession).toEqual({ limit: 10, windowSeconds: 600 });
    expect(d.guestCreateTenant).toEqual({ limit: 6000, windowSeconds: 60 });
    expect(c.rateLimits.networkTiers['ipv6-48']).toEqual({ limit: 9, windowSeconds: 90 });
    expect(
      problemsOf(env({ RATE_LIMIT_NET_IPV4_24: 'x', RATE_LIMIT_GUEST_CREATE_TENANT: '0/1' })).map(
        (p) => p.split(':')[0],
      ),
    ).toEqual(['RATE_LIMIT_NET_IPV4_24', 'RATE_LIMIT_GUEST_CREATE_TENANT']);
  });

  it('requires an RS256 key for the control plane and an ES256 key for customers', () => {
    expect(problemsOf(env({ SIGNING_KEYS: JSON.stringify({ keys: [ec] }) }))).toContain(
      'SIGNING_KEYS: needs an RS256 key for the control plane',
    );
    expect(problemsOf(env({ SIGNING_KEYS: JSON.stringify({ keys: [rsa] }) }))).toContain(
      'SIGNING_KEYS: needs an ES256 key for customer tokens',
    );
    expect(problemsOf(env({ SIGNING_KEYS: JSON.stringify({ keys: [rsa, { ...rsa }, ec] }) }))).toContain(
      'SIGNING_KEYS: key 1 repeats a kid',
    );
    expect(problemsOf(env({ SIGNING_KEYS: JSON.stringify({ keys: [{ ...rsa, d: undefined }, ec] }) }))[0]).toMatch(
      /key 0 must be a private/,
    );
  });

  it.each([
    ['the same origin', 'http://localhost:3000', 'http://localhost:3000'],
    ['one host name on two ports', 'http://localhost:3000', 'http://localhost:3001'],
    ['one host name on two schemes', 'https://auth.example.com', 'http://auth.example.com'],
  ])('refuses AUTH_ORIGIN and CONSOLE_ORIGIN with %s (contract 10)', (_l, auth, consoleOrigin) => {
    // Development: production would also refuse the non-loopback http origin on its own (issue 22).
    expect(problemsOf(env({ NODE_ENV: 'development', AUTH_ORIGIN: auth, CONSOLE_ORIGIN: consoleOrigin }))).toEqual([
      'CONSOLE_ORIGIN: must have another host name than AUTH_ORIGIN (cookies ignore ports)',
    ]);
  });

  const SMTP = { MAIL_TRANSPORT: 'smtp', MAIL_FROM: 'svc@example.com', SMTP_URL: 'smtp://127.0.0.1:2525' };
  const URL_SHAPE = '(a numeric port; @ : / % in a password %-escaped)';

  // Without an address nodemailer sends `MAIL FROM:<>`, which relays refuse: every code mail fails.
  it.each(['no-reply', 'svc auth', 'Studio <>', '"a b"@example.com', 'a@b@example.com'])(
    'refuses MAIL_FROM %j',
    (from) => {
      expect(problemsOf(env({ ...SMTP, MAIL_FROM: from }))).toEqual([
        'MAIL_FROM: must be an address, name@host or "Display Name <name@host>"',
      ]);
    },
  );

  it.each(['svc@example.com', 'svc-auth@localhost', 'Star Clicker <no-reply@studio.example>'])(
    'accepts MAIL_FROM %j',
    (from) => {
      expect(loadConfig(env({ ...SMTP, MAIL_FROM: from })).mail).toMatchObject({ from });
    },
  );
  it.each([
    ['REDIS_URL', 'redis://:S3cretPw@127.0.0.1:notaport', 'redis: or rediss:'],
    ['REDIS_URL', 'redis://:S3cretPw@127.0.0.1:65536', 'redis: or rediss:'],
    ['REDIS_URL', 'redis://:S3cretPw%zz@127.0.0.1:6379', 'redis: or rediss:'],
    ['REDIS_URL', 'http://:S3cretPw@127.0.0.1:6379', 'redis: or rediss:'],
    ['DATABASE_URL', 'postgres://svc:S3cretPw@127.0.0.1:notaport/auth', 'postgres: or postgresql:'],
    ['DATABASE_URL', 'postgres://svc:S3cretPw@[127.0.0.1/auth', 'postgres: or postgresql:'],
    ['DATABASE_URL', 'postgres://svc:S3cretPw%zz@127.0.0.1/auth', 'postgres: or postgresql:'],
    ['DATABASE_URL', 'postgres://svc:pw@S3cretPw/x@127.0.0.1:5432/auth', 'postgres: or postgresql:'],
    ['REDIS_URL', 'redis://:pw@S3cretPw/x@127.0.0.1:6379', 'redis: or rediss:'],
    ['SMTP_URL', 'smtp://svc:S3cretPw@127.0.0.1:notaport', 'smtp: or smtps:'],
    ['SMTP_URL', 'smtp://svc:S3cretPw%G1@mail.example:587', 'smtp: or smtps:'],
  ])('names %s, never its password, when its client could not read %s', (name, value, protocols) => {
    const shapes = protocols
      .split(' or ')
      .map((p) => `${p}//`)
      .join(' or ');
    const problems = problemsOf(env({ ...SMTP, [name]: value }));
    expect(problems).toEqual([`${name}: must be a ${shapes} URL ${URL_SHAPE}`]);
    expect(problems.join('\n')).not.toContain('S3cret');
  });

  it('accepts the dependency URLs their clients read: pg sockets, an escaped PostgreSQL password, TLS', () => {
    for (const DATABASE_URL of [
      'postgresql://svc:pw@db.internal:5432/auth?sslmode=require',
      'postgres://svc:pw@/auth?host=/run/postgresql',
      'postgres://svc:p%40s%2Fs%25@127.0.0.1/auth',
    ])
      expect(problemsOf(env({ DATABASE_URL }))).toEqual([]);
    expect(
      problemsOf(
        env({ ...SMTP, SMTP_URL: 'smtps://svc:p%40ss@mail.example:465', REDIS_URL: 'rediss://u:pw@redis:6380/2' }),
      ),
    ).toEqual([]);
  });

  it("refuses a REDIS_URL database no Redis takes (a server's own count is checked on connecting)", () => {
    for (const path of ['/abc', '/007', '/-1', '/1/2', '/2147483647', '/99999999999', '?db=abc'])
      expect(problemsOf(env({ REDIS_URL: `redis://:S3cretPw@127.0.0.1:6379${path}` }))).toEqual([
        'REDIS_URL: its path must name a database by number, /0 to /15 on a default Redis',
      ]);
    for (const path of ['', '/', '/0', '/15', '/99', '?db=3'])
      expect(problemsOf(env({ REDIS_URL: `redis://127.0.0.1:6379${path}` }))).toEqual([]);
  });

  it('reaches the API at AUTH_INTERNAL_URL as an origin: a trailing slash is dropped, a path refused', () => {
    expect(loadConfig(env()).authInternalUrl).toBe('http://localhost:3000');
    expect(loadConfig(env({ AUTH_INTERNAL_URL: 'http://127.0.0.1:3000/' })).authInternalUrl).toBe(
      'http://127.0.0.1:3000',
    );
    for (const value of [
      'http://127.0.0.1:3000//',
      'http://127.0.0.1:3000/auth',
      'http://127.0.0.1:3000/?x=1',
      'http://127.0.0.1:3000#top',
      'http://svc:S3cretPw@127.0.0.1:3000',
    ])
      expect(problemsOf(env({ AUTH_INTERNAL_URL: value }))).toEqual([
        'AUTH_INTERNAL_URL: must be a bare origin such as https://svc-auth.internal:3443',
      ]);
  });

  it('listens for metrics on loopback unless METRICS_HOST names another address (an IP)', () => {
    expect(loadConfig(env()).metricsHost).toBe('127.0.0.1');
    expect(loadConfig(env({ METRICS_HOST: '::' })).metricsHost).toBe('::');
    for (const METRICS_HOST of ['localhost', 'metrics.internal', '127.0.0.1:9464'])
      expect(problemsOf(env({ METRICS_HOST }))).toEqual([
        'METRICS_HOST: must be an IP address to listen on, such as 127.0.0.1 or ::',
      ]);
  });

  it('validates origins as bare origins', () => {
    expect(problemsOf(env({ AUTH_ORIGIN: 'http://localhost:3000/' }))).toEqual([
      'AUTH_ORIGIN: must be a bare origin such as https://auth.example.com',
    ]);
    expect(problemsOf(env({ AUTH_ORIGIN: 'ftp://localhost:3000' }))).toEqual([
      'AUTH_ORIGIN: must be a bare origin such as https://auth.example.com',
    ]);
    expect(problemsOf(env({ AUTH_ORIGIN: 'auth host' }))).toEqual(['AUTH_ORIGIN: not a URL']);
  });
});
