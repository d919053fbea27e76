import type { Request } from 'express';
import { BasicStrategy } from 'passport-http';
import { clientSecretDigest } from '../../src/directory/client-secret';
import { ConsoleClientAuthenticator } from '../../src/management-auth/console-client.authenticator';
import { ConsoleClientBasicStrategy } from '../../src/management-auth/console-client-basic.strategy';
import type { ConsoleClientRows } from '../../src/management-auth/console-client-rows';
import { ConsoleClientVerifier } from '../../src/management-auth/console-client.verifier';
import { Pseudonymizer } from '../../src/platform/crypto/digests';
import type { ClientEntity } from '../../src/platform/database/entities/client.entity';
import { CONTROL_PLANE_TENANT_ID } from '../../src/directory/control-plane';

const pseudonymizer = new Pseudonymizer([Buffer.alloc(32, 5)]);
const SECRET = 'se:cr:et-of-the-console';
const CONSOLE_ROW = {
  id: 'cli_console',
  tenantId: CONTROL_PLANE_TENANT_ID,
  type: 'confidential',
  enabled: true,
  secretDigest: clientSecretDigest(pseudonymizer, 'cli_console', SECRET),
} as ClientEntity;

const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function verifierWith(rows: ClientEntity[]): { verifier: ConsoleClientVerifier; lookups: string[] } {
  const lookups: string[] = [];
  const clients = {
    find: (id: string) => {
      lookups.push(id);
      return Promise.resolve(rows.find((r) => r.id === id) ?? null);
    },
  } as unknown as ConsoleClientRows;
  return { verifier: new ConsoleClientVerifier(clients, pseudonymizer, { consoleClientId: 'cli_console' }), lookups };
}

describe('ConsoleClientVerifier: the one check of the console client’s Basic credentials', () => {
  it('accepts the console client’s id and secret, a secret holding colons included', async () => {
    const { verifier } = verifierWith([CONSOLE_ROW]);
    await expect(verifier.verify(basic('cli_console', SECRET))).resolves.toEqual({ clientId: 'cli_console' });
  });

  it.each([
    ['a wrong secret', [CONSOLE_ROW], basic('cli_console', 'se:cr')],
    ['an unknown client', [CONSOLE_ROW], basic('cli_other', SECRET)],
    ['a disabled client', [{ ...CONSOLE_ROW, enabled: false }], basic('cli_console', SECRET)],
    ['a public client', [{ ...CONSOLE_ROW, type: 'browser' }], basic('cli_console', SECRET)],
    ['a client of a customer tenant', [{ ...CONSOLE_ROW, tenantId: 'acme' }], basic('cli_console', SECRET)],
  ] as const)('refuses %s', async (_name, rows, header) => {
    const { verifier } = verifierWith([...rows] as ClientEntity[]);
    await expect(verifier.verify(header)).resolves.toBeNull();
  });

  it('refuses any client id but the configured console client’s without reading a client row', async () => {
    // Only existing rows are cached: each made-up id would otherwise cost a PostgreSQL read on a
    // route with no network budget, a flood of them a full connection pool.
    const { verifier, lookups } = verifierWith([CONSOLE_ROW, { ...CONSOLE_ROW, id: 'cli_other' }]);
    for (const id of ['cli_other', 'cli_made_up', 'cli_game_of_a_tenant'])
      await expect(verifier.verify(basic(id, SECRET))).resolves.toBeNull();
    expect(lookups).toEqual([]);
  });

  it('refuses a header it cannot parse without reading any client row', async () => {
    const { verifier, lookups } = verifierWith([CONSOLE_ROW]);
    for (const header of [
      undefined,
      'Bearer abc',
      'Basic !!!',
      `Basic ${Buffer.from('cli_console').toString('base64')}`,
    ])
      await expect(verifier.verify(header)).resolves.toBeNull();
    expect(lookups).toEqual([]);
  });
});

describe('the passport-http strategy and the basic:console-client authenticator', () => {
  const { verifier } = verifierWith([CONSOLE_ROW]);
  const verify = jest.spyOn(verifier, 'verify');
  // Registers itself with passport under its name, as Nest does at start-up.
  new ConsoleClientBasicStrategy(verifier);
  const authenticator = new ConsoleClientAuthenticator();
  const looseParse = jest.spyOn(BasicStrategy.prototype, 'authenticate');
  const request = (authorization: string): Request =>
    ({ headers: { authorization }, res: { setHeader: jest.fn(), end: jest.fn() } }) as unknown as Request;

  beforeEach(() => {
    verify.mockClear();
    looseParse.mockClear();
  });

  it('authenticates through passport with the verifier, which reads the header once; passport-http’s own parse never runs', async () => {
    const header = basic('cli_console', SECRET);
    const req = request(header);
    await expect(authenticator.authenticate(req)).resolves.toEqual({ kind: 'console-client', clientId: 'cli_console' });
    expect(verify.mock.calls).toEqual([[header]]);
    expect(looseParse).not.toHaveBeenCalled();
    // Passport answered nothing itself: the handler's answer is the only one.
    const res = req.res as unknown as { setHeader: jest.Mock; end: jest.Mock };
    expect(res.setHeader).not.toHaveBeenCalled();
    expect(res.end).not.toHaveBeenCalled();
  });

  it('refuses with the one 401 invalid_client and its Basic challenge', async () => {
    await expect(authenticator.authenticate(request(basic('cli_console', 'wrong')))).rejects.toMatchObject({
      code: 'invalid_client',
      status: 401,
      challenge: 'basic',
    });
    expect(verify).toHaveBeenCalledTimes(1);
  });
});
