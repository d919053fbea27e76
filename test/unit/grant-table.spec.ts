import { AppError } from '../../src/errors/app-error';
import { GrantTable, type Grant } from '../../src/http/grant-table';
import { CustomerRefreshGrant } from '../../src/guest/customer-refresh.grant';
import { CUSTOMER_GRANT_TYPES } from '../../src/guest/customer-token.service';
import { AuthorizationCodeGrant } from '../../src/management-auth/authorization-code.grant';
import { RefreshTokenGrant } from '../../src/management-auth/refresh-token.grant';
import { MANAGEMENT_GRANT_TYPES } from '../../src/management-auth/token.service';

type Request = { readonly value?: string };

/** A grant that records what reached it. */
function recording(name: string): Grant<Request, { name: string; value: string }, string> & { answered: string[] } {
  const answered: string[] = [];
  return {
    answered,
    input: (request) => {
      if (!request.value) throw new AppError('invalid_request', `${name} needs a value.`);
      return { name, value: request.value };
    },
    answer: (input) => {
      answered.push(input.value);
      return Promise.resolve(`${input.name}:${input.value}`);
    },
  };
}

describe('a token endpoint’s table of grants', () => {
  const first = recording('first');
  const second = recording('second');
  const table = new GrantTable<'first' | 'second', Request, string>({ first, second }, 'grant_type is required.');

  it('runs the grant its grant_type names, with the input that grant read', async () => {
    await expect(table.answer('second', { value: 'v' })).resolves.toBe('second:v');
    expect(second.answered).toEqual(['v']);
    expect(first.answered).toEqual([]);
  });

  it('refuses a request without grant_type with invalid_request, with the table’s description or the default', async () => {
    await expect(table.answer(undefined, { value: 'v' })).rejects.toMatchObject({
      code: 'invalid_request',
      description: 'grant_type is required.',
    });
    const plain = new GrantTable<'first', Request, string>({ first });
    await expect(plain.answer(undefined, {})).rejects.toMatchObject({
      code: 'invalid_request',
      description: new AppError('invalid_request').description,
    });
  });

  it.each(['password', 'client_credentials', '', 'constructor', '__proto__', 'toString'])(
    'answers unsupported_grant_type for %j, a name no grant of the table has',
    async (grantType) => {
      await expect(table.answer(grantType, { value: 'v' })).rejects.toMatchObject({ code: 'unsupported_grant_type' });
    },
  );

  it('never answers a request its grant’s input refused', async () => {
    const before = first.answered.length;
    await expect(table.answer('first', {})).rejects.toMatchObject({
      code: 'invalid_request',
      description: 'first needs a value.',
    });
    expect(first.answered).toHaveLength(before);
  });
});

/** What `fn` threw. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('nothing was thrown');
}

/** A grant's input reads only the request; the grant's stores and services are not needed for it. */
const inputOf = <T extends object>(grant: new (...args: never[]) => T): T => Object.create(grant.prototype) as T;

describe('the grants’ own typed inputs', () => {
  it('lists the grant types each endpoint states in discovery', () => {
    expect(MANAGEMENT_GRANT_TYPES).toEqual(['authorization_code', 'refresh_token']);
    expect(CUSTOMER_GRANT_TYPES).toEqual(['refresh_token']);
  });

  it('authorization_code: needs a code; redirect_uri and code_verifier are checked against the code later', () => {
    const grant = inputOf(AuthorizationCodeGrant);
    expect(grant.input({ clientId: 'cli_console', body: { grant_type: 'authorization_code', code: 'c' } })).toEqual({
      clientId: 'cli_console',
      code: 'c',
      redirectUri: undefined,
      codeVerifier: undefined,
    });
    expect(
      thrown(() => grant.input({ clientId: 'cli_console', body: { grant_type: 'authorization_code' } })),
    ).toMatchObject({ code: 'invalid_request', description: 'code is required.' });
  });

  it('refresh_token (control plane): needs the refresh token', () => {
    const grant = inputOf(RefreshTokenGrant);
    expect(grant.input({ clientId: 'cli_console', body: { refresh_token: 'r' } })).toEqual({
      clientId: 'cli_console',
      refreshToken: 'r',
    });
    expect(thrown(() => grant.input({ clientId: 'cli_console', body: { code: 'c' } }))).toMatchObject({
      code: 'invalid_request',
      description: 'refresh_token is required.',
    });
  });

  it('refresh_token (customer): the body’s token wins over the refresh cookie; a client_id is required', () => {
    const grant = inputOf(CustomerRefreshGrant);
    const request = (body: Record<string, string>, cookieToken?: string) => ({ tenantId: 'acme', body, cookieToken });
    expect(grant.input(request({ client_id: 'cli_a', refresh_token: 'body' }, 'cookie'))).toEqual({
      tenantId: 'acme',
      clientId: 'cli_a',
      refreshToken: 'body',
    });
    expect(grant.input(request({ client_id: 'cli_a' }, 'cookie')).refreshToken).toBe('cookie');
    const missing = {
      code: 'invalid_request',
      description: 'refresh_token (or the refresh cookie) and client_id are required.',
    };
    expect(thrown(() => grant.input(request({ client_id: 'cli_a' })))).toMatchObject(missing);
    expect(thrown(() => grant.input(request({ refresh_token: 'body' }, 'cookie')))).toMatchObject(missing);
  });
});
