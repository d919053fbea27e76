import { ReplyError } from 'ioredis';
import { dependencyOf } from '../../src/errors/dependency-failure';

/** Contract section 10: a Redis that refuses the service's connection is a 503, never a 500. */
describe('dependencyOf: Redis refusing the connection itself', () => {
  it.each([
    ['NOAUTH Authentication required.'],
    ['WRONGPASS invalid username-password pair or user is disabled.'],
    ['ERR max number of clients reached'],
    ['ERR Error running script (call to f_0123): @user_script:1: NOAUTH Authentication required.'],
  ])('%s', (message) => {
    expect(dependencyOf(new ReplyError(message))).toBe('redis');
  });

  it('still leaves a plain error of the request alone', () => {
    expect(dependencyOf(new ReplyError('ERR wrong number of arguments'))).toBeNull();
  });
});
