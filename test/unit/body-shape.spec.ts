import { bodyShapeRefusal, MAX_BODY_DEPTH } from '../../src/http/body-rules';

/** An object `depth` containers deep: objects and arrays alternating, a string at the bottom. */
function nested(depth: number): object {
  let value: unknown = 'leaf';
  for (let level = depth; level > 1; level--) value = level % 2 === 0 ? [value] : { a: value };
  return { a: value };
}

describe('bodyShapeRefusal: the shape rules of a parsed JSON body', () => {
  it('accepts the shapes routes take', () => {
    expect(bodyShapeRefusal({ email: 'a@b.example', role: 'viewer' })).toBeUndefined();
    expect(bodyShapeRefusal({ name: 'Web', scopes: ['openid'], redirect_uris: [] })).toBeUndefined();
  });

  it(`accepts ${MAX_BODY_DEPTH} levels and refuses one more`, () => {
    expect(bodyShapeRefusal(nested(MAX_BODY_DEPTH))).toBeUndefined();
    expect(bodyShapeRefusal(nested(MAX_BODY_DEPTH + 1))).toMatch(/nested too deeply/);
  });

  it('refuses a prototype key at any depth as an unknown field', () => {
    expect(bodyShapeRefusal(JSON.parse('{"a":[{"b":{"__proto__":{}}}]}') as object)).toMatch(/unknown field/);
    expect(bodyShapeRefusal({ constructor: 1 })).toMatch(/unknown field/);
  });
});
