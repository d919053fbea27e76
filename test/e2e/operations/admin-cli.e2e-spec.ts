import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { loadConfig, loadPrivacyKeys } from '../../../src/config/config';
import { SecretBox } from '../../../src/platform/crypto/secret-box';
import { admin, type AdminRun } from '../../support/admin-cli';
import { createSuiteDatabase, dropSuiteDatabase, PG_BASE } from '../../support/database';
import { readTestSecrets } from '../../support/test-secrets';
import { freePort } from '../../support/test-app';

/**
 * Contract 7 and 12: the admin CLI as an operator meets it. Every command's success and refusal
 * cases are rows of one table, run in order against one database. The commands that act on live
 * sessions (user deactivate|delete, session list|revoke, purge, chat reseal) have suites of their
 * own under test/e2e/operations, next to the effects they check.
 */
describe('admin CLI: help and configuration', () => {
  it.each(['--help', 'help', '-h', 'nonsense', 'tenant', 'tenant create extra', 'tenant list --help', ''])(
    '"%s" prints plain-text usage on stderr with status 2 and needs no configuration',
    async (line) => {
      const r = await admin({}, ...line.split(' ').filter(Boolean));
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^usage: npm run --silent admin -- <command>/);
      expect(r.stderr).toContain('\n  user deactivate --email EMAIL | --tenant ID --id usr_…\n');
      expect(r.stderr).not.toContain('\\n');
    },
  );

  it('the compiled CLI exits 2 on --help with an empty environment', () => {
    const cli = join(__dirname, '../../../dist/src/cli/admin.js');
    if (!existsSync(cli)) throw new Error('build first: npm run build (npm test does)');
    let status = 0;
    let stderr = '';
    try {
      execFileSync(process.execPath, [cli, '--help'], { env: {}, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      ({ status, stderr } = e as { status: number; stderr: string });
    }
    expect(status).toBe(2);
    expect(stderr).toContain('usage: npm run --silent admin');
  });

  it("PostgreSQL unreachable: the error names DATABASE_URL and pg's reason, never the password", async () => {
    const port = await freePort();
    const r = await admin({ DATABASE_URL: `postgres://postgres:S3cretPw@127.0.0.1:${port}/auth` }, 'tenant', 'list');
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stderr)).toEqual({
      error: 'failed',
      message: `DATABASE_URL: PostgreSQL cannot be reached or refused the connection (connect ECONNREFUSED 127.0.0.1:${port})`,
    });
  });

  it('a command names the one variable it lacks, and only that one', async () => {
    const r = await admin({}, 'tenant', 'list');
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stderr)).toEqual({
      error: 'configuration',
      message: 'invalid configuration: DATABASE_URL: required',
    });
  });

  it('generate-secrets needs no configuration and prints values the service accepts', async () => {
    const r = await admin({}, 'generate-secrets');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.map((l) => l.split('=')[0])).toEqual([
      'CONSOLE_CLIENT_SECRET',
      'CONSOLE_SESSION_KEY',
      'PRIVACY_KEY',
      'SIGNING_KEYS',
    ]);
    // What a POSIX shell would make of each line: single quotes only where needed.
    const env: Record<string, string> = {};
    for (const line of lines) {
      const m = /^([A-Z_]+)=(?:'([^']*)'|([A-Za-z0-9_-]+))$/.exec(line);
      expect(m).not.toBeNull();
      env[m![1]!] = m![2] ?? m![3]!;
    }
    expect(lines[3]).toMatch(/^SIGNING_KEYS='\{/);
    const config = loadConfig({
      ...env,
      AUTH_ORIGIN: 'https://auth.example.com',
      CONSOLE_ORIGIN: 'https://console.example.com',
      DATABASE_URL: 'postgres://db/x',
      REDIS_URL: 'redis://r:6379',
      CONSOLE_CLIENT_ID: 'cli_console',
    });
    expect(config.signingKeys.map((k) => k.alg)).toEqual(['RS256', 'ES256']);
    expect((await admin({}, 'generate-secrets')).stdout).not.toBe(r.stdout);
  });
});

const CLI = join(__dirname, '../../../dist/src/cli/admin.js');

interface Row {
  readonly argv: readonly string[];
  /** `env` is DATABASE_URL alone; `seed` adds the console client settings and PRIVACY_KEY; `privacy` adds PRIVACY_KEY. */
  readonly env?: 'seed' | 'privacy';
  /** Run the compiled CLI (as operators do) with this on stdin, instead of in this process. */
  readonly stdin?: string;
  readonly status: 0 | 1;
  /** For status 0, what stdout's JSON holds; for status 1, what stderr's JSON holds (toMatchObject). */
  readonly says?: unknown;
}

const browserClient = ['client', 'create', '--tenant', 'acme', '--name', 'x', '--type', 'browser'];
const webOrigins = (type: string, origins: string) => [
  ...['client', 'create', '--tenant', 'acme', '--id', 'cli_wo', '--name', 'x', '--type', type],
  ...['--scopes', '', '--web-origins', origins],
];
const chat = ['chat', 'configure', '--tenant', 'acme', '--client-id', '123'];
const callback = ['--redirect-uri', 'https://auth.example/t/acme/chat/callback'];
const invalid = (message?: string) => ({ error: 'invalid_input', ...(message === undefined ? {} : { message }) });

/** Per command, its rows in the order they run: later rows see what earlier ones wrote. */
const TABLE: ReadonlyArray<readonly [string, readonly Row[]]> = [
  ['migrate', [{ argv: ['migrate'], status: 0, says: { migrated: [] } }]],
  [
    'seed-control-plane',
    [
      { argv: ['seed-control-plane'], status: 1, says: { error: 'configuration' } },
      {
        argv: ['seed-control-plane'],
        env: 'seed',
        status: 0,
        says: {
          realm: 'control-plane',
          client_id: 'cli_console',
          redirect_uri: 'https://console.example.com/api/auth/callback',
        },
      },
    ],
  ],
  [
    'tenant create',
    [
      {
        argv: ['tenant', 'create', '--id', 'acme', '--name', 'Acme'],
        status: 0,
        says: { tenant: { id: 'acme', name: 'Acme', status: 'active' } },
      },
      { argv: ['tenant', 'create', '--id', 'beta', '--name', 'Beta'], status: 0 },
      {
        argv: ['tenant', 'create', '--id', 'acme', '--name', 'Again'],
        status: 1,
        says: invalid('tenant acme already exists'),
      },
      {
        argv: ['tenant', 'create', '--id', 'control-plane', '--name', 'x'],
        status: 1,
        says: { error: 'invalid_input', message: expect.stringContaining('not be control-plane') },
      },
      // Tenant ids are 2 to 63 characters; names at most 200.
      {
        argv: ['tenant', 'create', '--id', 'a'.repeat(64), '--name', 'x'],
        status: 1,
        says: { error: 'invalid_input', message: expect.stringContaining('--id must match') },
      },
      {
        argv: ['tenant', 'create', '--id', 'gamma', '--name', 'x'.repeat(201)],
        status: 1,
        says: invalid('--name must be at most 200 characters'),
      },
      { argv: ['tenant', 'create', '--id', 'x', '--name', 'Bad', '--colour', 'red'], status: 1, says: invalid() },
    ],
  ],
  [
    'tenant deactivate',
    [
      {
        argv: ['tenant', 'deactivate', '--id', 'beta'],
        status: 0,
        says: { tenant: { id: 'beta', status: 'inactive' } },
      },
      { argv: ['tenant', 'deactivate', '--id', 'nowhere'], status: 1, says: invalid() },
    ],
  ],
  [
    'tenant list',
    [
      {
        argv: ['tenant', 'list'],
        status: 0,
        says: {
          tenants: [
            { id: 'acme', name: 'Acme', status: 'active' },
            { id: 'beta', name: 'Beta', status: 'inactive' },
          ],
        },
      },
    ],
  ],
  [
    'client create',
    [
      {
        argv: [
          ...['client', 'create', '--tenant', 'acme', '--id', 'cli_web', '--name', 'Web', '--type', 'browser'],
          ...['--scopes', 'openid offline_access', '--redirect-uri', 'https://play.acme.example/cb'],
          ...['--redirect-uri', 'https://acme.example/auth', '--web-origins', 'https://Www.Acme.example:443'],
        ],
        status: 0,
        // Contract section 11: the redirect URIs' origins plus the given ones, canonical.
        says: {
          client: {
            client_id: 'cli_web',
            scopes: ['openid', 'offline_access'],
            web_origins: ['https://play.acme.example', 'https://acme.example', 'https://www.acme.example'],
          },
        },
      },
      {
        argv: ['client', 'create', '--tenant', 'acme', '--id', 'cli_app', '--name', 'App', '--type', 'native'],
        status: 0,
        says: { client: { client_id: 'cli_app', scopes: [], web_origins: [] } },
      },
      {
        argv: [...browserClient, '--id', 'cli_a', '--redirect-uri', 'https://x.example/cb'],
        status: 1,
        says: invalid(),
      },
      { argv: [...browserClient, '--id', 'cli_b', '--scopes', 'openid'], status: 1, says: invalid() },
      {
        argv: [...browserClient, '--id', 'cli_c', '--scopes', 'openid', '--redirect-uri', 'ftp://x.example'],
        status: 1,
        says: invalid(),
      },
      {
        argv: [...browserClient, '--id', 'nope', '--scopes', 'openid', '--redirect-uri', 'https://x.example/cb'],
        status: 1,
        says: invalid(),
      },
      // A client id is cli_ and 1 to 64 characters.
      {
        argv: [
          ...browserClient,
          '--id',
          `cli_${'a'.repeat(65)}`,
          '--scopes',
          'openid',
          '--redirect-uri',
          'https://x.example/cb',
        ],
        status: 1,
        says: { error: 'invalid_input', message: expect.stringContaining('--id must match') },
      },
      {
        argv: [
          ...['client', 'create', '--tenant', 'acme', '--id', 'cli_bad', '--name', 'x', '--type', 'spa'],
          ...['--scopes', '', '--redirect-uri', 'https://x'],
        ],
        status: 1,
        says: invalid(),
      },
      {
        argv: [
          ...['client', 'create', '--tenant', 'acme', '--id', 'cli_bad', '--name', 'x', '--type', 'native'],
          ...['--scopes', 'admin', '--redirect-uri', 'https://x'],
        ],
        status: 1,
        says: invalid(),
      },
      {
        argv: webOrigins('browser', 'https://play.example/game'),
        status: 1,
        says: invalid('--web-origins: https://play.example/game is not an http(s) origin (scheme://host[:port])'),
      },
      { argv: webOrigins('browser', 'null'), status: 1, says: invalid() },
      {
        argv: webOrigins('native', 'https://play.example'),
        status: 1,
        says: invalid('--web-origins: only browser clients have web origins'),
      },
    ],
  ],
  [
    'client disable',
    [
      {
        argv: ['client', 'disable', '--tenant', 'acme', '--id', 'cli_app'],
        status: 0,
        says: { client: { client_id: 'cli_app', enabled: false } },
      },
      { argv: ['client', 'disable', '--tenant', 'control-plane', '--id', 'cli_console'], status: 1, says: invalid() },
    ],
  ],
  [
    'client list',
    [
      {
        argv: ['client', 'list', '--tenant', 'acme'],
        status: 0,
        says: {
          clients: [
            { client_id: 'cli_app', name: 'App', type: 'native', enabled: false, scopes: [], web_origins: [] },
            {
              client_id: 'cli_web',
              name: 'Web',
              type: 'browser',
              enabled: true,
              scopes: ['openid', 'offline_access'],
              web_origins: ['https://play.acme.example', 'https://acme.example', 'https://www.acme.example'],
            },
          ],
        },
      },
      { argv: ['client', 'list', '--tenant', 'nowhere'], status: 1, says: invalid() },
      { argv: ['client', 'list'], status: 1, says: invalid() },
    ],
  ],
  [
    'membership add',
    [
      {
        argv: ['membership', 'add', '--tenant', 'acme', '--email', 'Dev@Acme.example', '--role', 'owner'],
        status: 0,
        says: { membership: { tenant: 'acme', role: 'owner' } },
      },
      {
        argv: ['membership', 'add', '--tenant', 'acme', '--email', 'dev@acme.example', '--role', 'root'],
        status: 1,
        says: invalid(),
      },
      {
        // The sign-in form refuses it (a quoted local part), so that member could never sign in.
        argv: [
          'membership',
          'add',
          '--tenant',
          'acme',
          '--email',
          '"x@elsewhere.example y"@acme.example',
          '--role',
          'viewer',
        ],
        status: 1,
        says: invalid(),
      },
      {
        argv: ['membership', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'developer'],
        status: 0,
      },
    ],
  ],
  [
    'membership list',
    [
      {
        argv: ['membership', 'list', '--tenant', 'acme'],
        status: 0,
        says: {
          memberships: [
            { user_id: expect.stringMatching(/^usr_/), email: 'dev@acme.example', role: 'owner' },
            { user_id: expect.stringMatching(/^usr_/), email: 'ops@acme.example', role: 'developer' },
          ],
        },
      },
    ],
  ],
  [
    'membership remove',
    [
      { argv: ['membership', 'remove', '--tenant', 'acme', '--email', 'ops@acme.example'], status: 0 },
      { argv: ['membership', 'remove', '--tenant', 'acme', '--email', 'ops@acme.example'], status: 1, says: invalid() },
    ],
  ],
  [
    'user show',
    [
      {
        argv: ['user', 'show', '--email', 'DEV@acme.example'],
        status: 0,
        says: {
          user: {
            id: expect.stringMatching(/^usr_/),
            tenant: 'control-plane',
            status: 'active',
            identities: [{ provider: 'email', email: 'dev@acme.example' }],
            memberships: [{ tenant: 'acme', role: 'owner' }],
          },
        },
      },
      { argv: ['user', 'show', '--email', 'nobody@acme.example'], status: 1, says: invalid() },
      { argv: ['user', 'show', '--tenant', 'acme'], status: 1, says: invalid() },
    ],
  ],
  [
    'chat configure',
    [
      // Digests and seals need PRIVACY_KEY: the command names it, and writes nothing.
      {
        argv: [...chat, '--client-secret-file', '-', ...callback],
        stdin: 's3cret\n',
        status: 1,
        says: { error: 'configuration', message: expect.stringContaining('PRIVACY_KEY: required') },
      },
      // The secret comes on stdin (`-`) or from a file (issue 22, point 6).
      {
        argv: [...chat, '--client-secret-file', '-', ...callback],
        env: 'privacy',
        stdin: 's3cret\n',
        status: 0,
        says: { chat_platform: { tenant: 'acme', client_id: '123', redirect_uri: callback[1] } },
      },
      // Contract 7's --client-secret still works, with a warning on stderr.
      { argv: [...chat, '--client-secret', 's3cret', ...callback], env: 'privacy', status: 0 },
      {
        argv: [...chat, '--client-secret', 's3cret', '--client-secret-file', '-', ...callback],
        env: 'privacy',
        stdin: 's3cret\n',
        status: 1,
        says: invalid(),
      },
      {
        argv: [...chat, '--client-secret-file', '-', ...callback],
        env: 'privacy',
        stdin: '',
        status: 1,
        says: invalid('--client-secret-file: must hold the secret alone, on one line'),
      },
    ],
  ],
  [
    'provider list, provider remove',
    [
      // They read and delete rows and open no seal: DATABASE_URL alone is enough (contract 12).
      { argv: ['provider', 'list', '--tenant', 'acme'], status: 0, says: { providers: [] } },
      { argv: ['provider', 'remove', '--tenant', 'acme', '--id', 'google'], status: 1, says: invalid() },
    ],
  ],
  [
    'identity redigest',
    [
      // acme's owner (membership add, above) is a console member: no address digest to write.
      { argv: ['identity', 'redigest'], env: 'privacy', status: 0, says: { digested: 0 } },
      { argv: ['identity', 'redigest', '--batch', '1'], env: 'privacy', status: 0, says: { digested: 0 } },
      { argv: ['identity', 'redigest', '--batch', '0'], env: 'privacy', status: 1, says: invalid() },
      {
        argv: ['identity', 'redigest'],
        status: 1,
        says: { error: 'configuration', message: expect.stringContaining('PRIVACY_KEY: required') },
      },
    ],
  ],
];

/** The compiled CLI with `input` on stdin. */
function compiled(env: Record<string, string>, argv: readonly string[], input: string): AdminRun {
  try {
    const stdout = execFileSync(process.execPath, [CLI, ...argv], { env, encoding: 'utf8', input });
    return { status: 0, out: JSON.parse(stdout), stdout, stderr: '' };
  } catch (e) {
    const { status, stdout, stderr } = e as { status: number; stdout: string; stderr: string };
    return { status, out: null, stdout, stderr };
  }
}

describe('admin CLI: each command, as it succeeds and as it refuses', () => {
  let db: string;
  let pg: Client;
  const envs: Record<'base' | 'seed' | 'privacy', Record<string, string>> = { base: {}, seed: {}, privacy: {} };
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('build first: npm run build (npm test does)');
    db = await createSuiteDatabase();
    const secrets = readTestSecrets();
    envs.base = { DATABASE_URL: `${PG_BASE}/${db}` };
    envs.privacy = { ...envs.base, PRIVACY_KEY: secrets.PRIVACY_KEY };
    envs.seed = {
      ...envs.privacy,
      CONSOLE_CLIENT_ID: 'cli_console',
      CONSOLE_CLIENT_SECRET: secrets.CONSOLE_CLIENT_SECRET,
      CONSOLE_ORIGIN: 'https://console.example.com',
    };
    pg = new Client({ connectionString: envs.base.DATABASE_URL });
    await pg.connect();
  });
  afterAll(async () => {
    await pg.end();
    await dropSuiteDatabase(db);
  });

  describe.each(TABLE)('%s', (_command, rows) => {
    it.each(rows.map((row) => [`${row.status === 0 ? 'runs' : 'refuses'} ${row.argv.join(' ')}`, row] as const))(
      '%s',
      async (_name, row) => {
        const env = envs[row.env ?? 'base'];
        const r = row.stdin === undefined ? await admin(env, ...row.argv) : compiled(env, row.argv, row.stdin);
        expect(r.status).toBe(row.status);
        if (row.status === 0) {
          expect(r.out).not.toBeNull();
          if (row.says !== undefined) expect(r.out).toMatchObject(row.says as object);
        } else {
          expect(r.stdout).toBe('');
          expect(JSON.parse(r.stderr)).toMatchObject(row.says as object);
        }
      },
    );
  });

  it('wrote no client, tenant or membership for a refused row', async () => {
    const { rows: clients } = await pg.query<{ id: string }>('SELECT id FROM clients ORDER BY id');
    expect(clients.map((c) => c.id)).toEqual(['cli_app', 'cli_console', 'cli_web']);
    const { rows: tenants } = await pg.query<{ id: string }>('SELECT id FROM tenants ORDER BY id');
    expect(tenants.map((t) => t.id)).toEqual(['acme', 'beta', 'control-plane']);
  });

  it('stores the chat secret sealed: it opens to the secret alone, without its line break', async () => {
    const { rows } = await pg.query<{ client_secret_sealed: string }>(
      'SELECT client_secret_sealed FROM chat_platform_apps',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.client_secret_sealed).not.toContain('s3cret');
    const box = new SecretBox(loadPrivacyKeys({ PRIVACY_KEY: readTestSecrets().PRIVACY_KEY }));
    expect(box.open(rows[0]?.client_secret_sealed as string, 'chat-platform-secret:acme')).toBe('s3cret');
  });

  it('audits every change as admin.<words>, with the subject and no secret', async () => {
    const { rows } = await pg.query<{ type: string; tenant_id: string; subject: string; data: object }>(
      'SELECT type, tenant_id, subject, data FROM audit_events ORDER BY id',
    );
    expect(rows.map((r) => [r.type, r.tenant_id, r.subject])).toEqual([
      ['admin.seed-control-plane', 'control-plane', 'cli_console'],
      ['admin.tenant.create', 'acme', 'acme'],
      ['admin.tenant.create', 'beta', 'beta'],
      ['admin.tenant.deactivate', 'beta', 'beta'],
      ['admin.client.create', 'acme', 'cli_web'],
      ['admin.client.create', 'acme', 'cli_app'],
      ['admin.client.disable', 'acme', 'cli_app'],
      ['admin.membership.add', 'acme', expect.stringMatching(/^usr_/)],
      ['admin.membership.add', 'acme', expect.stringMatching(/^usr_/)],
      ['admin.membership.remove', 'acme', expect.stringMatching(/^usr_/)],
      ['admin.chat.configure', 'acme', 'acme'],
      ['admin.chat.configure', 'acme', 'acme'],
      ['admin.identity.redigest', 'control-plane', 'identities'],
      ['admin.identity.redigest', 'control-plane', 'identities'],
    ]);
    expect(JSON.stringify(rows)).not.toMatch(/s3cret|dev@acme|ops@acme/);
  });
});
