import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import passport from 'passport';
import { AppError } from '../errors/app-error';
import { AuthenticatorFor, type Authenticator } from '../http/authenticator-registry';
import type { Principal } from '../http/principal';
import { CONSOLE_BASIC_STRATEGY } from './console-client-basic.strategy';
import type { ConsoleClient } from './console-client.verifier';

declare module '../http/principal' {
  interface Principals {
    /** The console BFF, authenticated as the control plane's confidential client. */
    'console-client': { readonly clientId: string };
  }
}

export function invalidClient(): AppError {
  return new AppError('invalid_client', undefined, { challenge: 'basic' });
}

/**
 * Runs the passport Basic strategy for the `basic:console-client` policy, on the request's own
 * response: with a callback, passport answers nothing itself, and the refusal is the one 401
 * `invalid_client` of the error filter, with its challenge.
 */
@Injectable()
@AuthenticatorFor('basic:console-client')
export class ConsoleClientAuthenticator implements Authenticator {
  authenticate(req: Request): Promise<Principal> {
    return new Promise((resolve, reject) => {
      const handler = passport.authenticate(
        CONSOLE_BASIC_STRATEGY,
        { session: false },
        (err: unknown, client: ConsoleClient | false) => {
          if (err) return reject(err instanceof Error ? err : new Error('basic authentication failed'));
          if (!client) return reject(invalidClient());
          resolve({ kind: 'console-client', clientId: client.clientId });
        },
      ) as (req: Request, res: Response | undefined, next: (err?: unknown) => void) => void;
      handler(req, req.res, (err?: unknown) => reject(err instanceof Error ? err : invalidClient()));
    });
  }
}
