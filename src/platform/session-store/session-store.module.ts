import { Global, Module } from '@nestjs/common';
import { OneTimeStore } from '../redis/one-time-store';
import { SessionStore } from './session-store';

@Global()
@Module({ providers: [SessionStore, OneTimeStore], exports: [SessionStore, OneTimeStore] })
export class SessionStoreModule {}
