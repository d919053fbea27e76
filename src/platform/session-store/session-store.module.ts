import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { OneTimeStore } from '../redis/one-time-store';
import { SessionStore } from './session-store';

@Module({
  imports: [CryptoModule],
  providers: [SessionStore, OneTimeStore],
  exports: [SessionStore, OneTimeStore],
})
export class SessionStoreModule {}
