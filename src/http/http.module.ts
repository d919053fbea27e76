import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { AuthenticatorRegistry } from './authenticator-registry';
import { ErrorFilter } from './error.filter';
import { AuthOriginAuthenticator, ConsoleOriginAuthenticator } from './origin.authenticators';
import { PolicyGuard } from './policy.guard';

/** The edge: the global policy guard, the error filter and the origin policies. */
@Module({
  imports: [DiscoveryModule],
  providers: [
    AuthenticatorRegistry,
    AuthOriginAuthenticator,
    ConsoleOriginAuthenticator,
    { provide: APP_GUARD, useClass: PolicyGuard },
    { provide: APP_FILTER, useClass: ErrorFilter },
  ],
})
export class HttpEdgeModule {}
