import { Global, Module } from '@nestjs/common';
import { EmailCodesStore } from './email-codes.store';

@Global()
@Module({ providers: [EmailCodesStore], exports: [EmailCodesStore] })
export class EmailCodesModule {}
