import { DataSource } from 'typeorm';
import { PreparedStatement } from '../../../src/platform/database/prepared-statement';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * The hot statements run as named prepared statements (prepared-statement.ts): the name must reach
 * PostgreSQL through TypeORM, or every call would be parsed and planned afresh.
 */
describe('prepared statements', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp({});
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  it('prepares the statement once on the connection and answers every call', async () => {
    const statement = new PreparedStatement('test-echo', 'SELECT $1::text AS value');
    const prepared = await db.transaction(async (m) => {
      // One transaction is one connection: pg_prepared_statements lists that session's statements.
      expect(await statement.run(m, ['first'])).toEqual([{ value: 'first' }]);
      expect(await statement.run(m, ['second'])).toEqual([{ value: 'second' }]);
      return m.query<unknown[]>(`SELECT name, statement FROM pg_prepared_statements WHERE name = 'test-echo'`);
    });
    expect(prepared).toEqual([{ name: 'test-echo', statement: 'SELECT $1::text AS value' }]);
  });

  it('runs on the pool as well, whichever connection it gets', async () => {
    const statement = new PreparedStatement('test-sum', 'SELECT $1::int + $2::int AS sum');
    const sums = await Promise.all([1, 2, 3, 4, 5].map((n) => statement.run(db, [n, n])));
    expect(sums).toEqual([1, 2, 3, 4, 5].map((n) => [{ sum: 2 * n }]));
  });
});
