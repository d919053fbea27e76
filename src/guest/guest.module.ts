import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DirectoryModule } from '../directory/directory.module';
import { Pseudonymizer } from '../platform/crypto/digests';
import { EmailCodesModule } from '../platform/email-codes/email-codes.module';
import { KeysModule } from '../platform/keys/keys.module';
import { RateLimitModule } from '../platform/rate-limit/rate-limit.module';
import { RefreshTokens } from '../platform/session-store/refresh-tokens';
import { SessionStoreModule } from '../platform/session-store/session-store.module';
import { BrowserFlows } from './browser-flows';
import { BrowserFlowsStore } from './browser-flows.store';
import { ChatController } from './chat.controller';
import { ChatPlatformClient } from './chat-platform.client';
import { ChatSignInService } from './chat-sign-in.service';
import { CustomerRefreshGrant } from './customer-refresh.grant';
import { SessionRecovery } from './session-recovery.service';
import { CustomerSessions } from './customer-sessions';
import { CustomerTokenController } from './customer-token.controller';
import { CustomerTokenService } from './customer-token.service';
import { CustomerTokens } from './customer-tokens';
import { FlowRecordsStore } from './flow-records.store';
import { GuestAccountsRepository } from './guest-accounts.repository';
import { GuestBearerAuthenticator } from './guest-bearer.authenticator';
import { GuestController } from './guest.controller';
import { GuestService } from './guest.service';
import { AccountLinkingService } from './account-linking.service';
import { IntentAndProof } from './intent-and-proof';
import { MeController } from './me.controller';
import { MeIdentitiesController } from './me-identities.controller';
import { MeService } from './me.service';
import { ProviderClients } from './provider-clients';
import { ProviderIdTokens } from './provider-id-tokens';
import { ProviderProofs } from './provider-proofs';
import { ProviderSignInService } from './provider-sign-in.service';
import { ProvidersController } from './providers.controller';
import { TenantClients } from './tenant-clients';
import { TenantDiscoveryController } from './tenant-discovery.controller';
import { TenantEmailController } from './tenant-email.controller';
import { TenantEmailService } from './tenant-email.service';
import { TenantWebOrigins } from './tenant-web-origins';
import { UpgradeService } from './upgrade.service';
import { RemovedProviders } from './removed-providers';

/** Guests of customer tenants and their upgrade to full accounts (spec 1.4–1.6, 4.3). */
@Module({
  imports: [DirectoryModule, KeysModule, SessionStoreModule, RateLimitModule, EmailCodesModule],
  controllers: [
    TenantDiscoveryController,
    GuestController,
    TenantEmailController,
    ChatController,
    CustomerTokenController,
    MeController,
    MeIdentitiesController,
    ProvidersController,
  ],
  providers: [
    AccountLinkingService,
    BrowserFlows,
    BrowserFlowsStore,
    ChatPlatformClient,
    ChatSignInService,
    CustomerRefreshGrant,
    SessionRecovery,
    CustomerSessions,
    CustomerTokenService,
    CustomerTokens,
    FlowRecordsStore,
    GuestAccountsRepository,
    GuestBearerAuthenticator,
    GuestService,
    IntentAndProof,
    RemovedProviders,
    MeService,
    ProviderClients,
    ProviderIdTokens,
    ProviderProofs,
    ProviderSignInService,
    // Lets the RFC 7009 revoke check a refresh token's MAC before it writes its audit row.
    {
      provide: RefreshTokens,
      useFactory: (config: AppConfig) => new RefreshTokens(new Pseudonymizer(config.privacyKeys)),
      inject: [APP_CONFIG],
    },
    TenantClients,
    TenantEmailService,
    TenantWebOrigins,
    UpgradeService,
  ],
})
export class GuestModule {}
