import { clusterNodeAuth } from '../../src/platform/redis/redis.module';

describe('what a Redis Cluster node connection takes from REDIS_URL', () => {
  it('takes the user and the password, decoded, and TLS for rediss://', () => {
    expect(clusterNodeAuth('rediss://svc:p%40ss%3Aword@redis.internal:6380')).toEqual({
      username: 'svc',
      password: 'p@ss:word',
      tls: {},
    });
  });

  it('takes a password without a user (requirepass)', () => {
    expect(clusterNodeAuth('redis://:secret@127.0.0.1:6379/0')).toEqual({ password: 'secret' });
  });

  it('takes nothing from a URL without credentials over plain TCP', () => {
    expect(clusterNodeAuth('redis://127.0.0.1:6379')).toEqual({});
  });
});
