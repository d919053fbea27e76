import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { MailModule } from '../mail/mail.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { EmailCodeBudgets } from './email-code-budgets';
import { EmailCodeSender } from './email-code-sender';
import { EmailCodesStore } from './email-codes.store';

@Module({
  imports: [CryptoModule, MailModule, RateLimitModule],
  providers: [EmailCodesStore, EmailCodeSender, EmailCodeBudgets],
  exports: [EmailCodesStore, EmailCodeSender, EmailCodeBudgets],
})
export class EmailCodesModule {}
