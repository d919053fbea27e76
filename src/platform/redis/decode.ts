/**
 * Reading back what the service wrote to Redis. Records outlive the release that wrote them (a
 * deploy keeps Redis), so a read checks the shape instead of casting: a record that is not what
 * this release expects reads as absent, which every caller already handles as "unknown, expired
 * or used", never as a half-typed object. One decoder per record type, next to the type.
 */
export type Decoder<T> = (value: unknown) => T | null;
export type Check<T> = (value: unknown) => value is T;

export const isString: Check<string> = (v): v is string => typeof v === 'string';
export const isNumber: Check<number> = (v): v is number => typeof v === 'number' && Number.isFinite(v);
export const isBoolean: Check<boolean> = (v): v is boolean => typeof v === 'boolean';
export const nullable =
  <T>(check: Check<T>): Check<T | null> =>
  (v): v is T | null =>
    v === null || check(v);
export const optional =
  <T>(check: Check<T>): Check<T | undefined> =>
  (v): v is T | undefined =>
    v === undefined || check(v);
export const oneOf =
  <T extends string>(...values: readonly T[]): Check<T> =>
  (v): v is T =>
    typeof v === 'string' && (values as readonly string[]).includes(v);

/** A decoder of a JSON object: every listed field must pass its check; others are dropped. */
export function objectDecoder<T>(fields: { readonly [K in keyof T]-?: Check<T[K]> }): Decoder<T> {
  const entries = Object.entries<Check<unknown>>(fields as Record<string, Check<unknown>>);
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const out: Record<string, unknown> = {};
    for (const [name, check] of entries) {
      const field = (value as Record<string, unknown>)[name];
      if (!check(field)) return null;
      if (field !== undefined) out[name] = field;
    }
    return out as T;
  };
}

/** JSON text as read from Redis, decoded; text that does not parse reads as absent too. */
export function decodeJson<T>(raw: unknown, decode: Decoder<T>): T | null {
  if (typeof raw !== 'string') return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  return decode(value);
}

/**
 * A script's array reply as strings, positions kept: a member that is not a string (a Lua
 * `false` arrives as null) reads as '', which every caller treats as missing.
 */
export function stringsReply(reply: unknown): string[] {
  return arrayReply(reply).map((v) => (typeof v === 'string' ? v : ''));
}

/** A script's array reply, its members still to be decoded; anything else reads as empty. */
export function arrayReply(reply: unknown): unknown[] {
  return Array.isArray(reply) ? (reply as unknown[]) : [];
}
