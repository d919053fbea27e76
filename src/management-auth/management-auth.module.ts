import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { DirectoryModule } from '../directory/directory.module';
import { CryptoModule } from '../platform/crypto/crypto.module';
import { EmailCodesModule } from '../platform/email-codes/email-codes.module';
import { KeysModule } from '../platform/keys/keys.module';
import { RateLimitModule } from '../platform/rate-limit/rate-limit.module';
import { SessionStoreModule } from '../platform/session-store/session-store.module';
import { AuthorizationCodeGrant } from './authorization-code.grant';
import { AuthorizationCodesStore } from './authorization-codes.store';
import { AuthorizeController } from './authorize.controller';
import { AuthorizeService } from './authorize.service';
import { ConsoleClientAuthenticator } from './console-client.authenticator';
import { ConsoleClientBasicStrategy } from './console-client-basic.strategy';
import { ConsoleClientRows } from './console-client-rows';
import { ConsoleClientVerifier } from './console-client.verifier';
import { ControlFlowsStore } from './control-flows.store';
import { DiscoveryController } from './discovery.controller';
import { EmailSignInController } from './email-sign-in.controller';
import { EmailSignInService } from './email-sign-in.service';
import { ManagementBearerAuthenticator } from './management-bearer.authenticator';
import { ManagementTokens } from './management-tokens';
import { RefreshTokenGrant } from './refresh-token.grant';
import { SessionController } from './session.controller';
import { SessionRevocationService } from './session-revocation.service';
import { TokenController } from './token.controller';
import { TokenService } from './token.service';

/** Developer sign-in to the control plane: authorize, email codes, tokens, sessions. */
@Module({
  imports: [
    PassportModule,
    DirectoryModule,
    CryptoModule,
    KeysModule,
    SessionStoreModule,
    RateLimitModule,
    EmailCodesModule,
  ],
  controllers: [DiscoveryController, AuthorizeController, EmailSignInController, TokenController, SessionController],
  providers: [
    AuthorizeService,
    ControlFlowsStore,
    EmailSignInService,
    AuthorizationCodesStore,
    TokenService,
    AuthorizationCodeGrant,
    RefreshTokenGrant,
    SessionRevocationService,
    ManagementTokens,
    ManagementBearerAuthenticator,
    ConsoleClientBasicStrategy,
    ConsoleClientRows,
    ConsoleClientVerifier,
    ConsoleClientAuthenticator,
  ],
})
export class ManagementAuthModule {}
