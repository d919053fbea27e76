import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterSubjects, clusterSuites, unscannedScripts } from '../support/redis-cluster-subjects';

/**
 * scripts/test.sh runs on a Redis Cluster only the e2e suites marked `// @redis-cluster`: the
 * marker names the multi-key scripts and commands (keys that must share a slot) the suite
 * exercises. Every one of them must be named by some suite, or a cross-slot bug would go unseen.
 */
describe('the Redis Cluster pass', () => {
  const subjects = clusterSubjects();
  const suites = clusterSuites();
  const named = new Set([...suites.values()].flat());

  it('finds the multi-key scripts and commands of src/', () => {
    // A guard on the scan itself: these are known to take several keys.
    expect(subjects.map((s) => s.name)).toEqual(
      expect.arrayContaining(['rate-limiter:TAKE_ALL', 'session-store:ROTATE_LEGACY', 'email-codes.store:rename']),
    );
    expect(subjects.map((s) => s.name)).not.toContain('session-store:ROTATE');
  });

  it('sees every Lua script of src/: each is a RedisScript constant the scan reads', () => {
    expect(unscannedScripts()).toEqual([]);
  });

  it.each(subjects.map((s) => [s.name, s.file]))('%s (%s) is exercised by a suite of the cluster pass', (name) => {
    expect([...suites].filter(([, names]) => names.includes(name)).map(([file]) => file)).not.toEqual([]);
  });

  it('names only subjects that exist, so a stale marker is noticed', () => {
    const known = new Set(subjects.map((s) => s.name));
    expect([...named].filter((n) => !known.has(n))).toEqual([]);
  });

  it('is the selection scripts/test.sh runs on the cluster', () => {
    const script = readFileSync(join(__dirname, '../../scripts/test.sh'), 'utf8');
    expect(script).toContain("grep -rlE --include='*.e2e-spec.ts' '^// @redis-cluster ' test/e2e");
  });
});
