import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { KeyRing } from './key-ring';

@Module({
  providers: [{ provide: KeyRing, useFactory: (config: AppConfig) => KeyRing.load(config), inject: [APP_CONFIG] }],
  exports: [KeyRing],
})
export class KeysModule {}
