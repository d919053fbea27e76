import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CustomerTokenSet } from '../../src/guest/customer-sessions';
import { MemoryCookieJar } from '../../sdk/src/cookie-jar';
import { newBrowserFlowId, type TokenSet } from '../../sdk/src/guest-client';
import { webStorage } from '../../sdk/src/secure-storage';

// The SDK declares the service's token set itself, so that the browser bundle never reaches into
// the service's Node code; these two lines fail the type-check when either side drifts.
const _serviceToSdk = (t: CustomerTokenSet): TokenSet => t;
const _sdkToService = (t: TokenSet): CustomerTokenSet => t;

const ROOT = join(__dirname, '..', '..');

describe('the SDK package (contract section 11)', () => {
  let out: string;
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'sdk-build-'));
    execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(ROOT, 'sdk/tsconfig.json'), '--outDir', out], {
      stdio: 'pipe',
    });
  }, 60_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('builds to ESM with type declarations for every module, and the entry the package.json names', () => {
    const files = readdirSync(out).sort();
    expect(files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'guest-client.js', 'guest-client.d.ts']));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'sdk/package.json'), 'utf8'));
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
  });

  it('exports from its entry point every type its public signatures name', () => {
    // A game written in TypeScript keeps what a listener is given (each event its own type), and
    // wraps navigator.locks.
    const consumer = join(out, 'consumer.ts');
    writeFileSync(
      consumer,
      [
        "import { GuestClient, webLocks, type LockManagerLike, type SessionState, type PersistenceChange } from './index.js';",
        'export function follow(auth: GuestClient, seen: SessionState[], warned: PersistenceChange[]): void {',
        "  auth.on('user', (change) => seen.push(change.previous));",
        "  auth.on('persistence', (change) => warned.push(change));",
        '}',
        'export const turns = (locks: LockManagerLike) => webLocks(locks);',
      ].join('\n'),
    );
    const flags = ['--noEmit', '--strict', '--target', 'ES2022', '--module', 'ES2022', '--moduleResolution', 'bundler'];
    const check = () =>
      execFileSync(join(ROOT, 'node_modules/.bin/tsc'), [...flags, '--lib', 'ES2022,DOM', consumer], {
        stdio: 'pipe',
      });
    expect(check).not.toThrow();
  });

  it('imports nothing but its own modules: no Node built-ins, no Buffer, no process, no require', () => {
    for (const file of readdirSync(out).filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(join(out, file), 'utf8');
      const specifiers = [...code.matchAll(/\b(?:from|import)\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
      for (const s of specifiers) expect(s).toMatch(/^\.\/[a-z-]+\.js$/);
      expect(code).not.toMatch(/\brequire\(|\bBuffer\b|\bprocess\.|node:/);
    }
  });

  it('makes flow ids of the contract form with Web Crypto', () => {
    const ids = new Set(Array.from({ length: 50 }, newBrowserFlowId));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^flw_[A-Za-z0-9_-]{24}$/);
  });

  it('keeps cookies in an explicit jar for Node and native shells, dropping expired ones', () => {
    const jar = new MemoryCookieJar();
    expect(jar.header()).toBeUndefined();
    jar.store(['__Host-svc_flow_a=one; Max-Age=3600; Path=/; HttpOnly; Secure; SameSite=Lax', 'b=two; Path=/']);
    expect(jar.header()).toBe('__Host-svc_flow_a=one; b=two');
    jar.store(['b=; Max-Age=0; Path=/']);
    expect(jar.get('b')).toBeUndefined();
    expect(jar.get('__Host-svc_flow_a')).toBe('one');
  });

  it('lets a cookie go when its Max-Age runs out, so a long-lived process sends no stale flows', () => {
    let now = 1_000_000;
    const jar = new MemoryCookieJar(() => now);
    jar.store(['__Host-svc_flow_a=one; Max-Age=3600; Path=/', '__Host-svc_flow_b=two; Max-Age=7200; Path=/']);
    now += 3_600_000;
    expect(jar.header()).toBe('__Host-svc_flow_b=two');
    expect(jar.get('__Host-svc_flow_a')).toBeUndefined();
    now += 3_600_000;
    expect(jar.header()).toBeUndefined();
  });

  it('adapts Web Storage as the browser’s SecureStorage', async () => {
    const backing = new Map<string, string>();
    const storage = webStorage({
      getItem: (k) => backing.get(k) ?? null,
      setItem: (k, v) => void backing.set(k, v),
      removeItem: (k) => void backing.delete(k),
    });
    await storage.set('k', 'v');
    expect(await storage.get('k')).toBe('v');
    await storage.delete('k');
    expect(await storage.get('k')).toBeNull();
  });
});
