import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { OneTimeStore } from '../redis/one-time-store';
import { DatasetEpoch } from './dataset-epoch';
import { SessionStore } from './session-store';

@Module({
  imports: [CryptoModule],
  providers: [SessionStore, OneTimeStore, DatasetEpoch],
  exports: [SessionStore, OneTimeStore, DatasetEpoch],
})
export class SessionStoreModule {}
