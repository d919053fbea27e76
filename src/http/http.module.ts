import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { AuthenticatorRegistry } from './authenticator-registry';
import { CachePolicyInterceptor } from './cache-policy';
import { ErrorFilter } from './error.filter';
import { AuthOriginAuthenticator, ConsoleOriginAuthenticator } from './origin.authenticators';
import { PolicyGuard } from './policy.guard';

/** The edge: the global policy guard, the error filter, the cache policy and the origin policies. */
@Module({
  imports: [DiscoveryModule],
  providers: [
    AuthenticatorRegistry,
    AuthOriginAuthenticator,
    ConsoleOriginAuthenticator,
    { provide: APP_GUARD, useClass: PolicyGuard },
    { provide: APP_FILTER, useClass: ErrorFilter },
    { provide: APP_INTERCEPTOR, useClass: CachePolicyInterceptor },
  ],
})
export class HttpEdgeModule {}
