import { ReplyError } from 'ioredis';
import { dependencyOf } from '../../src/errors/dependency-failure';

/** Contract section 10: a Redis that refuses the service's connection is a 503, never a 500. */
describe('dependencyOf: Redis refusing the connection itself', () => {
  it.each([
    ['NOAUTH Authentication required.'],
    ['WRONGPASS invalid username-password pair or user is disabled.'],
    ['ERR max number of clients reached'],
    ['ERR Error running script (call to f_0123): @user_script:1: NOAUTH Authentication required.'],
    // An ACL that no longer lets the service run a command or touch a key (issue 22, point 6).
    ["NOPERM this user has no permissions to run the 'evalsha' command"],
    ["NOPERM User svc has no permissions to run the 'hmget' command"],
    ['NOPERM this user has no permissions to access one of the keys used as arguments'],
    ['NOPERM No permissions to access a key'],
    // The same refusals met inside a script, as Redis 7.0 words them.
    [
      "ERR The user executing the script can't run this command or subcommand script: 617a3259215a668e3d0c28033b6455465979f6fa, on @user_script:1.",
    ],
    [
      "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script: f2e0927f, on @user_script:1.",
    ],
  ])('%s', (message) => {
    expect(dependencyOf(new ReplyError(message))).toBe('redis');
  });

  it.each([
    ["NOPERM this user has no permissions to run the 'config|get' command"],
    ["NOPERM this user has no permissions to run the 'config' command or its subcommand"],
  ])('leaves a CONFIG refusal to its reader, which starts with the policy unverified: %s', (message) => {
    expect(dependencyOf(new ReplyError(message))).toBeNull();
  });

  it('still leaves a plain error of the request alone', () => {
    expect(dependencyOf(new ReplyError('ERR wrong number of arguments'))).toBeNull();
  });
});
