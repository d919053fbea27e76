import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { Pseudonymizer } from './digests';
import { SecretBox } from './secret-box';

@Module({
  providers: [
    {
      provide: Pseudonymizer,
      useFactory: (config: AppConfig) => new Pseudonymizer(config.privacyKeys),
      inject: [APP_CONFIG],
    },
    {
      provide: SecretBox,
      useFactory: (config: AppConfig) => new SecretBox(config.privacyKeys),
      inject: [APP_CONFIG],
    },
  ],
  exports: [Pseudonymizer, SecretBox],
})
export class CryptoModule {}
