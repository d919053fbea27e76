import { isPristineProvisionalUser, type CredentialOwnerFacts } from '../../src/guest/pristine-provisional-user';

const INTENT_AT = 1_000_000;
const pristine: CredentialOwnerFacts = {
  kind: 'provisional',
  status: 'active',
  ownerCreatedAt: INTENT_AT + 1,
  identityCreatedAt: INTENT_AT + 1,
  identities: 1,
  hadSession: false,
  hadMembership: false,
  hadConsent: false,
};

describe('spec 4.3 rule 6: only a pristine provisional user gives up its credential', () => {
  it('holds for a provisional user and identity created after the intent, with no history', () => {
    expect(isPristineProvisionalUser(pristine, INTENT_AT)).toBe(true);
  });

  it.each<[string, Partial<CredentialOwnerFacts>]>([
    ['a guest', { kind: 'guest' }],
    ['a regular account', { kind: 'regular' }],
    ['a deactivated user', { status: 'deactivated' }],
    ['a user created at the intent', { ownerCreatedAt: INTENT_AT }],
    ['a user created before the intent', { ownerCreatedAt: INTENT_AT - 1 }],
    ['an identity created before the intent', { identityCreatedAt: INTENT_AT - 1 }],
    ['a user with another identity', { identities: 2 }],
    ['a user that had a session', { hadSession: true }],
    ['a user that had a membership', { hadMembership: true }],
    ['a user that had a consent', { hadConsent: true }],
  ])('fails for %s', (_name, change) => {
    expect(isPristineProvisionalUser({ ...pristine, ...change }, INTENT_AT)).toBe(false);
  });
});
