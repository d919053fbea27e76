import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startTestApp, type TestApp } from '../../support/test-app';

/** Every file the page loads, by the names index.html and the modules use. */
const MODULES = [
  'console.js',
  'api.js',
  'ui.js',
  'chart.js',
  'dashboard.js',
  'clients.js',
  'players.js',
  'audit.js',
  'members.js',
  'preact.mjs',
  'htm.mjs',
];

/** The specifiers of a module's static imports (`import … from '…'` and `import '…'`). */
function importsOf(source: string): string[] {
  return [...source.matchAll(/\bimport\s*(?:[^'"]*?\bfrom\s*)?["']([^"']+)["']/g)].map((m) => m[1] as string);
}

/**
 * The console page's files (issue 26): an explicit allow-list with JavaScript served as
 * JavaScript, the toolkit exactly as package-lock.json pins it, and a module graph that is closed
 * over the list, so the page needs no import map (an inline script the CSP would refuse).
 */
describe('console page files', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves the page under a CSP without unsafe-inline, and the page has no inline script or style', async () => {
    const res = await t.console().get('/').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.text).toContain('<script type="module" src="/assets/console.js"></script>');
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.text).not.toMatch(/\sstyle=|<style/);
  });

  it('serves each module as JavaScript, revalidated on each load, importing only files of the list', async () => {
    const imported = new Set<string>();
    for (const name of MODULES) {
      const res = await t.console().get(`/assets/${name}`).expect(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      for (const specifier of importsOf(res.text)) {
        expect(specifier).toMatch(/^\.\/[a-z]+\.m?js$/);
        expect(MODULES).toContain(specifier.slice(2));
        imported.add(specifier.slice(2));
      }
    }
    // …and the list holds nothing the page does not load: every file but the entry is imported.
    expect([...imported].sort()).toEqual(MODULES.filter((m) => m !== 'console.js').sort());
    const css = await t.console().get('/assets/console.css').expect(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('gives each file a strong ETag and answers a revalidation of an unchanged file with 304 and no body', async () => {
    const first = await t.console().get('/assets/preact.mjs').expect(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const again = await t.console().get('/assets/preact.mjs').set('If-None-Match', ifNoneMatch).expect(304);
      expect(again.headers.etag).toBe(etag);
      expect(again.text ?? '').toBe('');
    }
    const changed = await t.console().get('/assets/preact.mjs').set('If-None-Match', '"other"').expect(200);
    expect(changed.text).toBe(first.text);
    expect((await t.console().get('/assets/htm.mjs')).headers.etag).not.toBe(etag);
  });

  it('serves Preact and htm byte for byte as installed', async () => {
    const installed = (pkg: string, file: string) => readFileSync(join(dirname(require.resolve(pkg)), file), 'utf8');
    expect((await t.console().get('/assets/preact.mjs')).text).toBe(installed('preact', 'preact.mjs'));
    expect((await t.console().get('/assets/htm.mjs')).text).toBe(installed('htm', 'htm.mjs'));
  });

  it.each([
    'package.json',
    'preact.js',
    'hooks.mjs',
    'index.html',
    '..%2Fconsole-page.controller.ts',
    '..%2F..%2F..%2Fpackage.json',
  ])('refuses /assets/%s, which is not on the list', async (name) => {
    const res = await t.console().get(`/assets/${name}`).expect(404);
    expect(res.body).toMatchObject({ error: 'not_found' });
  });
});
