/**
 * Reading rows of raw SQL (style guide 16: read back with a decoder, never a cast). node-postgres
 * hands rows over untyped; a repository reads each column through one of these, which names the
 * column it refused, so a schema drift or a wrong query fails loudly at the first read instead of
 * travelling on as a half-typed value. One small decoder per query shape, next to the query.
 */
export type Row = Readonly<Record<string, unknown>>;

/** The error of a row that is not what the query should return. */
export class UnexpectedRowError extends Error {
  constructor(detail: string) {
    super(`unexpected row: ${detail}`);
    this.name = 'UnexpectedRowError';
  }
}

function refuse(column: string, expected: string): never {
  throw new UnexpectedRowError(`column ${column} is not ${expected}`);
}

/** The rows of a query result, each an object; anything else is refused. */
export function rowsOf(result: unknown): Row[] {
  if (!Array.isArray(result)) throw new UnexpectedRowError('the result is not a list of rows');
  for (const row of result as unknown[])
    if (typeof row !== 'object' || row === null || Array.isArray(row))
      throw new UnexpectedRowError('a row is not an object');
  return result as Row[];
}

/** The rows of a result, each decoded. */
export function decodeRows<T>(result: unknown, decode: (row: Row) => T): T[] {
  return rowsOf(result).map(decode);
}

/** The first row decoded, or null when there is none. */
export function decodeFirst<T>(result: unknown, decode: (row: Row) => T): T | null {
  const [row] = rowsOf(result);
  return row === undefined ? null : decode(row);
}

/** The rows of an UPDATE or DELETE result (`[rows, affected]` from TypeORM). */
export function affectedRows(result: unknown): { rows: Row[]; affected: number } {
  if (!Array.isArray(result) || result.length !== 2 || typeof result[1] !== 'number')
    throw new UnexpectedRowError('the result is not [rows, affected]');
  return { rows: rowsOf(result[0]), affected: result[1] };
}

export function text(row: Row, column: string): string {
  const value = row[column];
  return typeof value === 'string' ? value : refuse(column, 'text');
}

export function nullableText(row: Row, column: string): string | null {
  const value = row[column];
  return value === null || typeof value === 'string' ? value : refuse(column, 'text or null');
}

/** Text that must be one of `values` (a check constraint's or an enum's). */
export function oneOf<T extends string>(row: Row, column: string, values: readonly T[]): T {
  const value = row[column];
  return typeof value === 'string' && (values as readonly string[]).includes(value)
    ? (value as T)
    : refuse(column, `one of ${values.join(', ')}`);
}

export function bool(row: Row, column: string): boolean {
  const value = row[column];
  return typeof value === 'boolean' ? value : refuse(column, 'a boolean');
}

/** A text[] column. */
export function texts(row: Row, column: string): string[] {
  const value = row[column];
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : refuse(column, 'a text array');
}

export function timestamp(row: Row, column: string): Date {
  const value = row[column];
  return value instanceof Date ? value : refuse(column, 'a timestamp');
}

export function nullableTimestamp(row: Row, column: string): Date | null {
  const value = row[column];
  return value === null || value instanceof Date ? value : refuse(column, 'a timestamp or null');
}

/** A count or bigint, which node-postgres hands over as a string of digits. */
export function count(row: Row, column: string): number {
  const value = row[column];
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  return refuse(column, 'a count');
}

export function jsonObject(row: Row, column: string): Record<string, unknown> {
  const value = row[column];
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : refuse(column, 'a JSON object');
}

/** A JSON object whose values are text or null (identity metadata). */
export function jsonTextMap(row: Row, column: string): Record<string, string | null> {
  const value = jsonObject(row, column);
  return Object.values(value).every((v) => v === null || typeof v === 'string')
    ? (value as Record<string, string | null>)
    : refuse(column, 'a JSON object of text or null');
}

/** A JSON array of objects (a `json_agg` of rows), each to be decoded as a row. */
export function jsonRows(row: Row, column: string): Row[] {
  const value = row[column];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v)))
    return refuse(column, 'a JSON array of objects');
  return value as Row[];
}
