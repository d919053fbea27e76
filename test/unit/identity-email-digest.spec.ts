import { randomBytes } from 'node:crypto';
import { IdentityEmailDigest, type AddressedIdentity } from '../../src/directory/identity-email-digest';
import { CONTROL_PLANE_TENANT_ID } from '../../src/directory/control-plane';
import { Pseudonymizer } from '../../src/platform/crypto/digests';

const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const digestUnder = (...keys: Buffer[]) => new IdentityEmailDigest(() => new Pseudonymizer(keys));
const identity = (over: Partial<AddressedIdentity>): AddressedIdentity => ({
  tenantId: 'acme',
  provider: 'email',
  providerSubject: 'player@example.com',
  email: 'player@example.com',
  emailVerified: true,
  ...over,
});

describe('IdentityEmailDigest (issue 26)', () => {
  const d = digestUnder(oldKey);

  it('digests the canonical address, so any case and spacing finds the same row', () => {
    const stored = d.of(identity({}));
    expect(stored).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(d.candidates(' Player@EXAMPLE.com ')).toEqual([stored]);
    expect(d.of(identity({ provider: 'google', providerSubject: 'g-1', email: 'PLAYER@example.com' }))).toBe(stored);
  });

  it('digests a provider identity only by its verified email, and never a console member', () => {
    expect(d.of(identity({ provider: 'google', providerSubject: 'g-1', emailVerified: false }))).toBeNull();
    expect(d.of(identity({ provider: 'chat_platform', providerSubject: 'c-1', email: null }))).toBeNull();
    expect(d.of(identity({ tenantId: CONTROL_PLANE_TENANT_ID }))).toBeNull();
  });

  it('is keyed and separated from other purposes: neither a plain hash nor another domain’s MAC', () => {
    const stored = d.of(identity({}));
    expect(digestUnder(newKey).of(identity({}))).not.toBe(stored);
    expect(new Pseudonymizer([oldKey]).mac('svc:other', 'player@example.com')).not.toBe(stored);
  });

  it('after a rotation asks for the digest under every key, the new key’s first', () => {
    const rotated = digestUnder(newKey, oldKey);
    expect(rotated.candidates('player@example.com')).toEqual([
      digestUnder(newKey).of(identity({})),
      d.of(identity({})),
    ]);
    expect(rotated.of(identity({}))).toBe(digestUnder(newKey).of(identity({})));
  });

  it('does not ask for PRIVACY_KEY when there is nothing to digest', () => {
    const keys = jest.fn(() => new Pseudonymizer([oldKey]));
    expect(new IdentityEmailDigest(keys).of(identity({ tenantId: CONTROL_PLANE_TENANT_ID }))).toBeNull();
    expect(keys).not.toHaveBeenCalled();
  });
});
