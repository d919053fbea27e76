import { ReplyError } from 'ioredis';
import { QueryFailedError } from 'typeorm';
import { dependencyOf } from '../../src/errors/dependency-failure';

const reply = (message: string): Error => new ReplyError(message);
const pg = (code: string, message: string): Error =>
  new QueryFailedError('UPDATE x', [], Object.assign(new Error(message), { code }));

/** Contract section 10: a dependency that refuses work is a 503, never a 500 and never success. */
describe('dependencyOf', () => {
  it.each([
    ["OOM command not allowed when used memory > 'maxmemory'."],
    [
      "ERR Error running script (call to f_0123): @user_script:3: OOM command not allowed when used memory > 'maxmemory'.",
    ],
    ['EXECABORT Transaction discarded because of previous errors.'],
    ["READONLY You can't write against a read only replica."],
    ['BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.'],
    ['LOADING Redis is loading the dataset in memory'],
    ['MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.'],
    ['NOREPLICAS Not enough good replicas to write.'],
    ['MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.'],
    ['CLUSTERDOWN The cluster is down'],
    ['TRYAGAIN Multiple keys request during rehashing of slot'],
  ])('Redis refusing work: %s', (message) => {
    expect(dependencyOf(reply(message))).toBe('redis');
  });

  it.each([
    ['40001', 'could not serialize access due to concurrent update'],
    ['40P01', 'deadlock detected'],
    ['55P03', 'could not obtain lock on row in relation "users"'],
    ['57014', 'canceling statement due to statement timeout'],
    ['53100', 'could not extend file: No space left on device'],
    ['53200', 'out of memory'],
    ['53300', 'sorry, too many clients already'],
    ['25006', 'cannot execute UPDATE in a read-only transaction'],
    ['57P01', 'terminating connection due to administrator command'],
    ['08006', 'connection failure'],
  ])('PostgreSQL refusing work: SQLSTATE %s', (code, message) => {
    expect(dependencyOf(pg(code, message))).toBe('postgres');
  });

  it.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a constraint violation', pg('23505', 'duplicate key value violates unique constraint')],
    ['a Redis wrong-type reply', reply('WRONGTYPE Operation against a key holding the wrong kind of value')],
    ['not an error', 'OOM command not allowed'],
  ])('is not a dependency failure: %s', (_label, err) => {
    expect(dependencyOf(err)).toBeNull();
  });
});
