/**
 * Decoders for rows of raw SQL (style guide 16: read back with a decoder, never a cast). Each
 * names the column it refused, so a schema drift fails loudly at the first read.
 */
export type Row = Readonly<Record<string, unknown>>;

function refuse(column: string, expected: string): never {
  throw new Error(`unexpected row: column ${column} is not ${expected}`);
}

export function text(row: Row, column: string): string {
  const value = row[column];
  return typeof value === 'string' ? value : refuse(column, 'text');
}

export function nullableText(row: Row, column: string): string | null {
  const value = row[column];
  return value === null || typeof value === 'string' ? value : refuse(column, 'text or null');
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
