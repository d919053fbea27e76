import { ClientRowCache } from '../../src/directory/client-row-cache';
import { loadConfig } from '../../src/config/config';
import { localConfigEnv } from '../support/config-env';

/** Issue 24, point 4: one cache of client rows, its lifetime CLIENT_CACHE_TTL_MS. */
describe('ClientRowCache', () => {
  const clock = (): { now: () => number; advance: (ms: number) => void } => {
    let t = 1_000;
    return { now: () => t, advance: (ms) => void (t += ms) };
  };

  it('answers a row for CLIENT_CACHE_TTL_MS after its read, then reads it again', () => {
    const c = clock();
    const cache = new ClientRowCache<string>({ clientCacheTtlMs: 300 }, 10, c.now);
    cache.set('cli_a', 'row');
    c.advance(299);
    expect(cache.get('cli_a')).toBe('row');
    c.advance(1);
    expect(cache.get('cli_a')).toBeUndefined();
    // Gone for good: a later clock does not bring it back.
    expect(cache.get('cli_a')).toBeUndefined();
  });

  it('takes its lifetime from the configuration, 5 s by default and shortened by CLIENT_CACHE_TTL_MS', () => {
    expect(new ClientRowCache(loadConfig(localConfigEnv()), 10).lifetimeMs).toBe(5_000);
    expect(new ClientRowCache(loadConfig(localConfigEnv({ CLIENT_CACHE_TTL_MS: '250' })), 10).lifetimeMs).toBe(250);
  });

  it('counts the lifetime from when the read started, not when it was remembered', () => {
    const c = clock();
    const cache = new ClientRowCache<string>({ clientCacheTtlMs: 300 }, 10, c.now);
    const readAt = c.now();
    c.advance(200);
    cache.set('acme', 'origins', readAt);
    c.advance(100);
    expect(cache.get('acme')).toBeUndefined();
  });

  it('forgets a row on delete, and keeps at most `max` rows, the least recently used leaving first', () => {
    const c = clock();
    const cache = new ClientRowCache<number>({ clientCacheTtlMs: 5_000 }, 2, c.now);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c')]).toEqual([1, 3]);
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
  });
});
