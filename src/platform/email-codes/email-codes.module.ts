import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { MailModule } from '../mail/mail.module';
import { EmailCodeSender } from './email-code-sender';
import { EmailCodesStore } from './email-codes.store';

@Module({
  imports: [CryptoModule, MailModule],
  providers: [EmailCodesStore, EmailCodeSender],
  exports: [EmailCodesStore, EmailCodeSender],
})
export class EmailCodesModule {}
