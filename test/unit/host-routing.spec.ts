import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../../src/config/config';
import { hostRouting } from '../../src/http/host-routing';

/**
 * Host routing compares authorities (RFC 9110 §7.2): `auth.example.com:443` over https is the
 * authority `https://auth.example.com` names, as a client configured with an explicit port, or a
 * proxy passing the client's Host on (`X-Forwarded-Host $http_host`), writes it. Nothing else is
 * normalised: the route to the auth or the console host must never open to another authority.
 */
describe('host routing by authority', () => {
  const config = {
    nodeEnv: 'production',
    authOrigin: 'https://auth.example.com',
    consoleOrigin: 'http://console.example.com',
    trustProxy: 1,
  } as AppConfig;
  const routing = hostRouting(config);

  const status = (path: string, headers: Record<string, string>): number => {
    let answered = 0;
    const res = {
      status(code: number) {
        answered = code;
        return this;
      },
      json() {
        return this;
      },
    } as unknown as Response;
    routing({ path, headers } as unknown as Request, res, (() => {
      answered = 200;
    }) as NextFunction);
    return answered;
  };
  const api = (host: string) => status('/t/acme/guest', { host: '10.0.0.5:3000', 'x-forwarded-host': host });
  const page = (host: string) => status('/', { host });

  it.each(['auth.example.com', 'auth.example.com:443', 'AUTH.Example.com:443'])('routes %s to the API', (host) => {
    expect(api(host)).toBe(200);
  });

  it.each([
    'auth.example.com:8443',
    'auth.example.com:80',
    'auth.example.com:0443',
    'auth.example.com:443:443',
    'auth.example.com.',
    'user@auth.example.com',
    'evil.example:443',
    'console.example.com',
    ':443',
    '',
  ])('refuses %s for the API', (host) => {
    expect(api(host)).toBe(404);
  });

  it('takes the default port of each origin’s own scheme', () => {
    expect(page('console.example.com:80')).toBe(200);
    expect(page('console.example.com:443')).toBe(404);
  });
});
