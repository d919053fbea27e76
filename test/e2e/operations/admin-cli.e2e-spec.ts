import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { loadConfig, loadPrivacyKeys } from '../../../src/config/config';
import { SecretBox } from '../../../src/platform/crypto/secret-box';
import { admin } from '../../support/admin-cli';
import { createSuiteDatabase, dropSuiteDatabase, PG_BASE } from '../../support/database';
import { readTestSecrets } from '../../support/test-secrets';

/** Contract 7 and 12: the admin CLI as an operator meets it. */
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

  it('a command names the one variable it lacks, and only that one', async () => {
    const r = await admin({}, 'tenant', 'list');
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stderr)).toEqual({
      error: 'configuration',
      message: 'invalid configuration:\n  - DATABASE_URL: required',
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

describe('admin CLI: directory commands on PostgreSQL alone', () => {
  let db: string;
  let env: Record<string, string>;
  let pg: Client;
  beforeAll(async () => {
    db = await createSuiteDatabase();
    env = { DATABASE_URL: `${PG_BASE}/${db}` };
    pg = new Client({ connectionString: env.DATABASE_URL });
    await pg.connect();
  });

  it('seeds the control plane from the console client settings, PRIVACY_KEY and DATABASE_URL', async () => {
    const secrets = readTestSecrets();
    const seedEnv = {
      ...env,
      PRIVACY_KEY: secrets.PRIVACY_KEY,
      CONSOLE_CLIENT_ID: 'cli_console',
      CONSOLE_CLIENT_SECRET: secrets.CONSOLE_CLIENT_SECRET,
      CONSOLE_ORIGIN: 'https://console.example.com',
    };
    expect((await admin(seedEnv, 'seed-control-plane')).out).toEqual({
      realm: 'control-plane',
      client_id: 'cli_console',
      redirect_uri: 'https://console.example.com/api/auth/callback',
    });
  });
  afterAll(async () => {
    await pg.end();
    await dropSuiteDatabase(db);
  });

  it('creates and lists tenants, clients and memberships with DATABASE_URL only', async () => {
    expect((await admin(env, 'tenant', 'create', '--id', 'acme', '--name', 'Acme')).out).toEqual({
      tenant: { id: 'acme', name: 'Acme', status: 'active' },
    });
    await admin(env, 'tenant', 'create', '--id', 'beta', '--name', 'Beta');
    await admin(env, 'tenant', 'deactivate', '--id', 'beta');
    expect((await admin(env, 'tenant', 'list')).out).toEqual({
      tenants: [
        { id: 'acme', name: 'Acme', status: 'active' },
        { id: 'beta', name: 'Beta', status: 'inactive' },
      ],
    });
    const created = await admin(
      env,
      ...['client', 'create', '--tenant', 'acme', '--id', 'cli_web', '--name', 'Web', '--type', 'browser'],
      ...['--scopes', 'openid offline_access', '--redirect-uri', 'https://play.acme.example/cb'],
      ...['--redirect-uri', 'https://acme.example/auth', '--web-origins', 'https://Www.Acme.example:443'],
    );
    expect(created.status).toBe(0);
    await admin(env, 'client', 'create', '--tenant', 'acme', '--id', 'cli_app', '--name', 'App', '--type', 'native');
    expect((await admin(env, 'client', 'list', '--tenant', 'acme')).out).toEqual({
      clients: [
        { client_id: 'cli_app', name: 'App', type: 'native', enabled: true, scopes: [], web_origins: [] },
        {
          client_id: 'cli_web',
          name: 'Web',
          type: 'browser',
          enabled: true,
          scopes: ['openid', 'offline_access'],
          web_origins: ['https://play.acme.example', 'https://acme.example', 'https://www.acme.example'],
        },
      ],
    });
    await admin(env, 'membership', 'add', '--tenant', 'acme', '--email', 'Dev@Acme.example', '--role', 'owner');
    const members = (await admin(env, 'membership', 'list', '--tenant', 'acme')).out;
    expect(members).toEqual({
      memberships: [{ user_id: expect.stringMatching(/^usr_/), email: 'dev@acme.example', role: 'owner' }],
    });
    const shown = (await admin(env, 'user', 'show', '--email', 'DEV@acme.example')).out;
    expect(shown.user).toMatchObject({
      id: members.memberships[0].user_id,
      tenant: 'control-plane',
      status: 'active',
      identities: [{ provider: 'email', email: 'dev@acme.example' }],
      memberships: [{ tenant: 'acme', role: 'owner' }],
    });
  });

  it('refuses a browser client without scopes or redirect URI, and bad input, with status 1', async () => {
    const base = ['client', 'create', '--tenant', 'acme', '--name', 'x', '--type', 'browser'];
    const cases: string[][] = [
      [...base, '--id', 'cli_a', '--redirect-uri', 'https://x.example/cb'],
      [...base, '--id', 'cli_b', '--scopes', 'openid'],
      [...base, '--id', 'cli_c', '--scopes', 'openid', '--redirect-uri', 'ftp://x.example'],
      [...base, '--id', 'nope', '--scopes', 'openid', '--redirect-uri', 'https://x.example/cb'],
      ['client', 'list', '--tenant', 'nowhere'],
      ['client', 'list'],
      ['tenant', 'create', '--id', 'acme', '--name', 'Again'],
      ['tenant', 'create', '--id', 'x', '--name', 'Bad', '--colour', 'red'],
      ['user', 'show', '--email', 'nobody@acme.example'],
      ['user', 'show', '--tenant', 'acme'],
    ];
    for (const argv of cases) {
      const r = await admin(env, ...argv);
      expect([argv.join(' '), r.status]).toEqual([argv.join(' '), 1]);
      expect(JSON.parse(r.stderr)).toMatchObject({ error: 'invalid_input' });
    }
    const { rows } = await pg.query(`SELECT id FROM clients WHERE id IN ('cli_a', 'cli_b', 'cli_c')`);
    expect(rows).toEqual([]);
  });

  it('writes digests and seals only when PRIVACY_KEY is given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-auth-chat-'));
    const secretFile = join(dir, 'chat-secret');
    writeFileSync(secretFile, 's3cret\n', { mode: 0o600 });
    try {
      const chat = ['chat', 'configure', '--tenant', 'acme', '--client-id', '123', '--client-secret-file', secretFile];
      const args = [...chat, '--redirect-uri', 'https://auth.example/t/acme/chat/callback'];
      expect(JSON.parse((await admin(env, ...args)).stderr).message).toContain('PRIVACY_KEY: required');
      const r = await admin({ ...env, PRIVACY_KEY: readTestSecrets().PRIVACY_KEY }, ...args);
      expect(r.out).toEqual({
        chat_platform: { tenant: 'acme', client_id: '123', redirect_uri: 'https://auth.example/t/acme/chat/callback' },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The file held the secret with its line break: the sealed value opens to the secret alone.
    const { rows } = await pg.query('SELECT client_secret_sealed FROM chat_platform_apps');
    expect(rows).toHaveLength(1);
    expect(rows[0].client_secret_sealed).not.toContain('s3cret');
    const box = new SecretBox(loadPrivacyKeys({ PRIVACY_KEY: readTestSecrets().PRIVACY_KEY }));
    expect(box.open(rows[0].client_secret_sealed, 'chat-platform-secret:acme')).toBe('s3cret');
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
      ['admin.membership.add', 'acme', expect.stringMatching(/^usr_/)],
      ['admin.chat.configure', 'acme', 'acme'],
    ]);
    expect(JSON.stringify(rows)).not.toMatch(/s3cret|dev@acme/);
  });
});
