import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { Pseudonymizer } from '../../src/platform/crypto/digests';

/**
 * Stored digests (client secrets, identity emails) were made with this construction and must keep
 * matching: HMAC-SHA-256 under the key over the domain, one NUL byte and the value, in UTF-8.
 */
describe('Pseudonymizer: the digest construction stored rows depend on', () => {
  const key = Buffer.alloc(32, 7);
  const expected = (domain: string, value: string): string =>
    createHmac('sha256', key)
      .update(Buffer.concat([Buffer.from(domain, 'utf8'), Buffer.from([0]), Buffer.from(value, 'utf8')]))
      .digest('base64url');

  it('is HMAC-SHA-256(key, domain NUL value), base64url', () => {
    const p = new Pseudonymizer([key]);
    expect(p.mac('svc:tenant:acme:email', 'player@example.com')).toBe(
      expected('svc:tenant:acme:email', 'player@example.com'),
    );
    fc.assert(fc.property(fc.string(), fc.fullUnicodeString(), (d, v) => p.mac(d, v) === expected(d, v)));
  });

  it('answers under every key, current first', () => {
    const other = Buffer.alloc(32, 9);
    const [current, earlier] = new Pseudonymizer([key, other]).macs('d', 'v');
    expect(current).toBe(expected('d', 'v'));
    expect(earlier).toBe(new Pseudonymizer([other]).mac('d', 'v'));
  });
});
