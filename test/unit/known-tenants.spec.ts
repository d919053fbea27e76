import { KnownTenants, RELOAD_ON_MISS_MIN_MS } from '../../src/guest/known-tenants';

/** Issue 22, point 6: unknown tenant ids cost no PostgreSQL read of their own. */
describe('KnownTenants', () => {
  it('answers a burst of random unknown ids with one shared load', async () => {
    let loads = 0;
    const known = new KnownTenants(() => {
      loads += 1;
      return Promise.resolve(['acme']);
    });
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => known.mayBeActive(`nope-${i}`)));
    expect(answers.every((a) => !a)).toBe(true);
    expect(loads).toBe(1);
    expect(await known.mayBeActive('acme')).toBe(true);
    expect(loads).toBe(1);
  });

  it('loads at most once per interval however long the misses go on', async () => {
    let loads = 0;
    const known = new KnownTenants(() => {
      loads += 1;
      return Promise.resolve([]);
    });
    const started = performance.now();
    let i = 0;
    while (performance.now() - started < 3 * RELOAD_ON_MISS_MIN_MS) {
      await Promise.all(Array.from({ length: 20 }, () => known.mayBeActive(`nope-${i++}`)));
    }
    expect(loads).toBeLessThanOrEqual(5);
  });

  it('never refuses a tenant that existed before the question, even just after a load', async () => {
    const ids = ['acme'];
    const known = new KnownTenants(() => Promise.resolve([...ids]));
    expect(await known.mayBeActive('fresh')).toBe(false);
    ids.push('fresh'); // created by the CLI right after that load
    expect(await known.mayBeActive('fresh')).toBe(true);
  });

  it('lets a failed load fail the callers that waited for it, and retries on the next miss', async () => {
    let fail = true;
    const known = new KnownTenants(() => (fail ? Promise.reject(new Error('db down')) : Promise.resolve(['acme'])));
    await expect(known.mayBeActive('acme')).rejects.toThrow('db down');
    fail = false;
    expect(await known.mayBeActive('acme')).toBe(true);
  });
});
