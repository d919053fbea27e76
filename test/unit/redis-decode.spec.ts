import {
  decodeJson,
  isBoolean,
  isNumber,
  isString,
  nullable,
  objectDecoder,
  oneOf,
  optional,
  stringsReply,
} from '../../src/platform/redis/decode';

interface Example {
  readonly id: string;
  readonly at: number;
  readonly kind: 'a' | 'b';
  readonly email: string | null;
  readonly verified: boolean;
  readonly note?: string;
}

const decodeExample = objectDecoder<Example>({
  id: isString,
  at: isNumber,
  kind: oneOf('a', 'b'),
  email: nullable(isString),
  verified: isBoolean,
  note: optional(isString),
});
const good = { id: 'x', at: 1, kind: 'a', email: null, verified: true };

describe('decoding what Redis gives back (records of older releases read as absent)', () => {
  it('returns the typed record for the expected shape, dropping unknown fields', () => {
    expect(decodeJson(JSON.stringify({ ...good, extra: 1 }), decodeExample)).toEqual(good);
    expect(decodeJson(JSON.stringify({ ...good, note: 'n' }), decodeExample)).toEqual({ ...good, note: 'n' });
  });

  it.each<[string, unknown]>([
    ['a missing field', { id: 'x', at: 1, kind: 'a', verified: true }],
    ['a field of another type', { ...good, at: '1' }],
    ['a value outside the closed set', { ...good, kind: 'c' }],
    ['a non-finite number', { ...good, at: null }],
    ['a wrong optional field', { ...good, note: 5 }],
    ['an array', [good]],
    ['a scalar', 'x'],
    ['null', null],
  ])('reads %s as absent', (_name, value) => {
    expect(decodeJson(JSON.stringify(value), decodeExample)).toBeNull();
  });

  it('reads text that is not JSON, and a missing value, as absent', () => {
    expect(decodeJson('{"id":', decodeExample)).toBeNull();
    expect(decodeJson(null, decodeExample)).toBeNull();
  });

  it('keeps the positions of a script reply, a Lua false (null) reading as empty', () => {
    expect(stringsReply(['ok', null, 'x'])).toEqual(['ok', '', 'x']);
    expect(stringsReply(0)).toEqual([]);
  });
});
