import { loadConfig } from '../../src/config/config';
import { configProblems as problemsOf, localConfigEnv as baseEnv } from '../support/config-env';

describe('TRUST_PROXY_HOPS (contract section 10: the client IP behind a CDN and a load balancer)', () => {
  it('trusts no proxy by default', () => {
    expect(loadConfig(baseEnv()).trustProxy).toBe(0);
  });

  it('trusts one hop with TRUST_PROXY=true alone', () => {
    expect(loadConfig(baseEnv({ TRUST_PROXY: 'true' })).trustProxy).toBe(1);
  });

  it('trusts TRUST_PROXY_HOPS hops', () => {
    expect(loadConfig(baseEnv({ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '2' })).trustProxy).toBe(2);
  });

  it.each([
    [{ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '0' }, 'TRUST_PROXY_HOPS: must be an integer from 1 to 10'],
    [{ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: 'two' }, 'TRUST_PROXY_HOPS: must be an integer from 1 to 10'],
    [{ TRUST_PROXY_HOPS: '2' }, 'TRUST_PROXY_HOPS: needs TRUST_PROXY=true'],
  ])('refuses %j', (overrides, problem) => {
    expect(problemsOf(baseEnv(overrides))).toEqual([problem]);
  });
});
