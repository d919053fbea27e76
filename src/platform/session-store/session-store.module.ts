import { Module } from '@nestjs/common';
import { OneTimeStore } from '../redis/one-time-store';
import { SessionStore } from './session-store';

@Module({ providers: [SessionStore, OneTimeStore], exports: [SessionStore, OneTimeStore] })
export class SessionStoreModule {}
