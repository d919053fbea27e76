import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The console page reads its tenants again after a 403 (ROLES_CHANGED). The tenant list answering
 * 403 itself (a gateway's refusal: the API never does) must not start another read, or the page
 * would ask for it again and again, as fast as the network answers.
 */
describe('the console page after a 403', () => {
  const api = pathToFileURL(join(__dirname, '../../src/console-bff/assets/api.js')).href;

  /** Runs the page's api.js in Node (it is an ES module) with a window and a fetch that answer 403. */
  function fetchesAfterRefusal(path: string): number {
    const script = `
      globalThis.window = new EventTarget();
      let fetches = 0;
      globalThis.fetch = async () => {
        fetches += 1;
        await new Promise((resolve) => setTimeout(resolve, 1)); // the network takes its time
        return new Response('{"error":"forbidden"}', { status: 403 });
      };
      const { api, ROLES_CHANGED } = await import(${JSON.stringify(api)});
      // As the page does (console.js reloadTenants): a role change reads the tenant list again.
      window.addEventListener(ROLES_CHANGED, () => api('/api/management/tenants').catch(() => undefined));
      await api(${JSON.stringify(path)}).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 200));
      console.log(fetches);
      process.exit(0);`;
    const run = spawnSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.stderr).toBe('');
    return Number(run.stdout.trim());
  }

  it('reads the tenant list again once after a refused write', () => {
    expect(fetchesAfterRefusal('/api/management/tenants/acme/clients')).toBe(2);
  });

  it('does not read the tenant list again when that read was refused', () => {
    expect(fetchesAfterRefusal('/api/management/tenants')).toBe(1);
  });
});
