import { POLICIES } from '../../src/http/policy.decorator';
import { securityOf } from '../../src/openapi/route-security';

describe('OpenAPI security derived from a route’s policy', () => {
  it('states each policy by its own scheme, and a public route by none', () => {
    expect(Object.fromEntries(POLICIES.map((policy) => [policy, securityOf({ policy })]))).toEqual({
      public: [],
      'origin:auth': [{ authOrigin: [] }],
      'origin:console': [{ consoleOrigin: [] }],
      'basic:console-client': [{ consoleClientBasic: [] }],
      'bearer:management': [{ managementBearer: [] }],
      'bearer:guest': [{ guestBearer: [] }],
      'console-session': [{ consoleSession: [] }],
    });
  });

  it('requires what the handler checks together with the policy’s scheme, in one requirement', () => {
    expect(securityOf({ policy: 'origin:auth', handlerChecks: ['controlFlowCookie'] })).toEqual([
      { authOrigin: [], controlFlowCookie: [] },
    ]);
  });

  it('refuses a public route that claims to check a credential: the document would contradict the guard', () => {
    expect(() => securityOf({ policy: 'public', handlerChecks: ['controlFlowCookie'] })).toThrow(
      /public route cannot require controlFlowCookie/,
    );
  });
});
