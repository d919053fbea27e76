import {
  affectedRows,
  bool,
  count,
  decodeFirst,
  decodeRows,
  jsonRows,
  jsonTextMap,
  nullableText,
  nullableTimestamp,
  oneOf,
  rowsOf,
  text,
  texts,
  timestamp,
  UnexpectedRowError,
} from '../../src/platform/database/row-decoders';

/** Issue 24, point 4: rows of raw SQL are decoded, a wrong shape refused by name, never cast. */
describe('row decoders', () => {
  const at = new Date('2026-11-24T12:00:00Z');
  const row = {
    id: 'cli_a',
    email: null,
    enabled: true,
    scopes: ['guest', 'openid'],
    created_at: at,
    deactivated_at: null,
    n: '42',
    i: 7,
    type: 'browser',
    metadata: { username: 'p', global_name: null },
    items: [{ tenant_id: 'acme' }],
  };

  it('reads each column as its type', () => {
    expect(text(row, 'id')).toBe('cli_a');
    expect(nullableText(row, 'email')).toBeNull();
    expect(nullableText(row, 'id')).toBe('cli_a');
    expect(bool(row, 'enabled')).toBe(true);
    expect(texts(row, 'scopes')).toEqual(['guest', 'openid']);
    expect(timestamp(row, 'created_at')).toBe(at);
    expect(nullableTimestamp(row, 'deactivated_at')).toBeNull();
    expect(count(row, 'n')).toBe(42);
    expect(count(row, 'i')).toBe(7);
    expect(oneOf(row, 'type', ['browser', 'native'] as const)).toBe('browser');
    expect(jsonTextMap(row, 'metadata')).toEqual({ username: 'p', global_name: null });
    expect(jsonRows(row, 'items')).toEqual([{ tenant_id: 'acme' }]);
  });

  it.each([
    ['text', () => text(row, 'enabled'), 'column enabled is not text'],
    ['text of a missing column', () => text(row, 'nope'), 'column nope is not text'],
    ['nullable text', () => nullableText(row, 'i'), 'column i is not text or null'],
    ['boolean', () => bool(row, 'id'), 'column id is not a boolean'],
    ['text array', () => texts({ scopes: ['a', 1] }, 'scopes'), 'column scopes is not a text array'],
    ['timestamp', () => timestamp(row, 'n'), 'column n is not a timestamp'],
    ['nullable timestamp', () => nullableTimestamp(row, 'id'), 'column id is not a timestamp or null'],
    ['count of text', () => count(row, 'id'), 'column id is not a count'],
    ['count too large to be exact', () => count({ n: '9999999999999999' }, 'n'), 'column n is not a count'],
    ['one of', () => oneOf(row, 'type', ['native'] as const), 'column type is not one of native'],
    ['JSON text map', () => jsonTextMap({ m: { a: 1 } }, 'm'), 'column m is not a JSON object of text or null'],
    ['JSON rows', () => jsonRows({ j: [1] }, 'j'), 'column j is not a JSON array of objects'],
  ])('refuses a wrong %s, naming the column', (_what, read, message) => {
    expect(read).toThrow(UnexpectedRowError);
    expect(read).toThrow(`unexpected row: ${message}`);
  });

  it('decodes the rows of a result, and the first or none', () => {
    const result: unknown = [{ id: 'a' }, { id: 'b' }];
    expect(decodeRows(result, (r) => text(r, 'id'))).toEqual(['a', 'b']);
    expect(decodeFirst(result, (r) => text(r, 'id'))).toBe('a');
    expect(decodeFirst([], (r) => text(r, 'id'))).toBeNull();
  });

  it('refuses a result that is not a list of row objects', () => {
    expect(() => rowsOf({ id: 'a' })).toThrow('unexpected row: the result is not a list of rows');
    expect(() => rowsOf([['a']])).toThrow('unexpected row: a row is not an object');
    expect(() => rowsOf([null])).toThrow('unexpected row: a row is not an object');
  });

  it("reads TypeORM's [rows, affected] answer to an UPDATE or DELETE", () => {
    expect(affectedRows([[{ user_id: 'usr_a' }], 1])).toEqual({ rows: [{ user_id: 'usr_a' }], affected: 1 });
    expect(() => affectedRows([{ id: 'a' }])).toThrow('unexpected row: the result is not [rows, affected]');
  });
});
