import { randomBytes } from 'node:crypto';
import { clientSecretDigest, clientSecretMatches } from '../../src/directory/client-secret';
import { openWithAny, seal } from '../../src/platform/crypto/aead';
import { Pseudonymizer } from '../../src/platform/crypto/digests';
import { SecretBox } from '../../src/platform/crypto/secret-box';

/** Contract 12: the first key of a list seals and digests, every key opens and verifies. */
describe('key lists', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('a client secret digest made under an older privacy key verifies while that key is listed', () => {
    const stored = clientSecretDigest(new Pseudonymizer([oldKey]), 'cli_console', 'secret-value');
    expect(clientSecretMatches(new Pseudonymizer([newKey, oldKey]), 'cli_console', 'secret-value', stored)).toBe(true);
    expect(clientSecretMatches(new Pseudonymizer([newKey]), 'cli_console', 'secret-value', stored)).toBe(false);
    expect(clientSecretMatches(new Pseudonymizer([newKey, oldKey]), 'cli_console', 'other', stored)).toBe(false);
  });

  it('a stored pair of digests accepts either console client secret, and only those', () => {
    const p = new Pseudonymizer([newKey]);
    const pair = ['first', 'second'].map((s) => clientSecretDigest(p, 'cli_console', s)).join(' ');
    expect(clientSecretMatches(p, 'cli_console', 'first', pair)).toBe(true);
    expect(clientSecretMatches(p, 'cli_console', 'second', pair)).toBe(true);
    expect(clientSecretMatches(p, 'cli_console', 'third', pair)).toBe(false);
    expect(clientSecretMatches(p, 'cli_other', 'first', pair)).toBe(false);
  });

  it('the first key makes new digests and seals; the others only open', () => {
    expect(new Pseudonymizer([newKey, oldKey]).mac('d', 'v')).toBe(new Pseudonymizer([newKey]).mac('d', 'v'));
    const sealedOld = new SecretBox([oldKey]).seal('chat-secret', 'purpose');
    const box = new SecretBox([newKey, oldKey]);
    expect(box.openWithKey(sealedOld, 'purpose')).toEqual({ plaintext: 'chat-secret', current: false });
    expect(box.openWithKey(box.seal('chat-secret', 'purpose'), 'purpose')).toEqual({
      plaintext: 'chat-secret',
      current: true,
    });
    expect(new SecretBox([newKey]).open(sealedOld, 'purpose')).toBeNull();
    const record = seal(oldKey, 'session', 'aad');
    expect(openWithAny([newKey, oldKey], record, 'aad')).toBe('session');
    expect(openWithAny([newKey], record, 'aad')).toBeNull();
  });
});
