import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { EmailCodesStore } from './email-codes.store';

@Module({ imports: [CryptoModule], providers: [EmailCodesStore], exports: [EmailCodesStore] })
export class EmailCodesModule {}
