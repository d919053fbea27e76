import { canSignIn, type HeldIdentity, type TenantSignIns } from '../../src/guest/sign-in-reach';

const GOOGLE = 'https://accounts.google.example';
const tenant: TenantSignIns = { providers: new Map([['google', GOOGLE]]), chatPlatform: true };

describe('contract 14: which identities keep an account reachable when another is unlinked', () => {
  it.each<[string, HeldIdentity, TenantSignIns]>([
    ['an email identity', { provider: 'email', issuer: null }, tenant],
    [
      'an email identity of a tenant with no provider and no chat platform',
      { provider: 'email', issuer: null },
      {
        providers: new Map(),
        chatPlatform: false,
      },
    ],
    ['a chat-platform identity while the tenant has the platform', { provider: 'chat_platform', issuer: null }, tenant],
    ['an identity of a configured provider proved by its issuer', { provider: 'google', issuer: GOOGLE }, tenant],
  ])('counts %s', (_label, identity, signIns) => {
    expect(canSignIn(identity, signIns)).toBe(true);
  });

  it.each<[string, HeldIdentity, TenantSignIns]>([
    ['an identity of a removed provider', { provider: 'retired', issuer: GOOGLE }, tenant],
    [
      'an identity of a provider id now registered for another issuer',
      { provider: 'google', issuer: 'https://other.example' },
      tenant,
    ],
    ['a provider identity whose issuer was never recorded', { provider: 'google', issuer: null }, tenant],
    [
      'a chat-platform identity once the tenant has no platform',
      { provider: 'chat_platform', issuer: null },
      {
        ...tenant,
        chatPlatform: false,
      },
    ],
  ])('does not count %s', (_label, identity, signIns) => {
    expect(canSignIn(identity, signIns)).toBe(false);
  });
});
