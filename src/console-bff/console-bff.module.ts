import { Module } from '@nestjs/common';
import { IpBudgetModule } from '../http/ip-budget.module';
import { ConsoleApiClient } from './console-api.client';
import { ConsoleAuthController } from './console-auth.controller';
import { ConsolePageController } from './console-page.controller';
import { ConsoleSessionAuthenticator } from './console-session.authenticator';
import { ConsoleSessionService } from './console-session.service';
import { ConsoleSessionsStore } from './console-sessions.store';
import { ConsoleSignInService } from './console-sign-in.service';
import { ManagementProxyController } from './management-proxy.controller';
import { PendingSignInsStore } from './pending-sign-ins.store';

/**
 * The console backend-for-frontend (spec 1.2, 4.1): its only way to the API is HTTP through
 * ConsoleApiClient. It imports nothing from management-auth or management, by design: deployed
 * on its own it would work the same.
 */
@Module({
  imports: [IpBudgetModule],
  controllers: [ConsoleAuthController, ManagementProxyController, ConsolePageController],
  providers: [
    ConsoleApiClient,
    PendingSignInsStore,
    ConsoleSessionsStore,
    ConsoleSessionService,
    ConsoleSignInService,
    ConsoleSessionAuthenticator,
  ],
})
export class ConsoleBffModule {}
