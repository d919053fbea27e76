import type { ExecutionContext } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppError } from '../../src/errors/app-error';
import { AuthenticatorRegistry } from '../../src/http/authenticator-registry';
import { UsePolicy } from '../../src/http/policy.decorator';
import { PolicyGuard } from '../../src/http/policy.guard';
import type { RequestWithPrincipal } from '../../src/http/principal';

class Routes {
  undeclared(): void {}
  @UsePolicy('public') open(): void {}
  @UsePolicy('bearer:guest') unregistered(): void {}
  @UsePolicy('bearer:management') management(): void {}
}

function contextFor(handler: keyof Routes, req: RequestWithPrincipal): ExecutionContext {
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
}

describe('PolicyGuard: deny by default', () => {
  const registry = new AuthenticatorRegistry({} as DiscoveryService);
  registry.register('bearer:management', {
    authenticate: (req: Request) =>
      req.headers.authorization === 'ok'
        ? Promise.resolve({ kind: 'management', userId: 'usr_1', sessionId: 'ses_1', email: 'a@b', scope: [] })
        : Promise.reject(new AppError('unauthorized')),
  });
  const guard = new PolicyGuard(new Reflector(), registry);
  const req = (headers: Record<string, string> = {}): RequestWithPrincipal =>
    ({ headers, path: '/x' }) as unknown as RequestWithPrincipal;

  /** What the guard threw, synchronously or by rejecting. */
  async function refusal(context: ExecutionContext): Promise<unknown> {
    try {
      await guard.canActivate(context);
    } catch (err) {
      return err;
    }
    throw new Error('the guard let the request through');
  }

  it('denies a route that declares no policy', async () => {
    await expect(refusal(contextFor('undeclared', req()))).resolves.toMatchObject({ code: 'forbidden' });
  });

  it('denies a policy with no registered authenticator', async () => {
    await expect(refusal(contextFor('unregistered', req()))).resolves.toMatchObject({ code: 'forbidden' });
  });

  it('lets public routes through with an anonymous principal, without a promise', () => {
    const r = req();
    expect(guard.canActivate(contextFor('open', r))).toBe(true);
    expect(r.principal).toEqual({ kind: 'anonymous' });
  });

  it('hands the authenticator principal to the route, or its error to the caller', async () => {
    const r = req({ authorization: 'ok' });
    await expect(guard.canActivate(contextFor('management', r))).resolves.toBe(true);
    expect(r.principal).toMatchObject({ kind: 'management', userId: 'usr_1' });
    await expect(refusal(contextFor('management', req()))).resolves.toMatchObject({ code: 'unauthorized' });
  });

  it('refuses to register two authenticators for one policy', () => {
    expect(() =>
      registry.register('bearer:management', { authenticate: () => Promise.reject(new Error('x')) }),
    ).toThrow(/twice/);
  });
});
