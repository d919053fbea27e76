import { scopesGrantable } from '../../src/management-auth/authorize.service';

describe('authorize scope check (spec 4.2)', () => {
  const known = ['tenant:read', 'tenant:write'];
  it.each([
    [['tenant:read'], ['tenant:read'], true],
    [['tenant:read', 'tenant:write'], ['tenant:read', 'tenant:write'], true],
    [['tenant:write'], ['tenant:read', 'tenant:write'], true],
    // Every requested scope must be allowed, not merely one of them.
    [['tenant:read', 'tenant:write'], ['tenant:read'], false],
    [['tenant:write'], ['tenant:read'], false],
    [['tenant:read', 'tenant:read'], ['tenant:read'], false],
    [['tenant:admin'], ['tenant:admin'], false],
    [[''], ['tenant:read'], false],
    [[], ['tenant:read'], false],
  ])('%j with %j allowed: %s', (requested, allowed, expected) => {
    expect(scopesGrantable(requested, known, allowed)).toBe(expected);
  });
});
