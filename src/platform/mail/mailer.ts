import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DependencyUnavailableError } from '../../errors/app-error';

export interface CodeMail {
  readonly to: string;
  readonly subject: string;
  /** The text body; the code is its only run of six digits (contract section 1). */
  readonly text: string;
}

/**
 * Delivers one-time codes. With no working transport it throws 503 and the caller keeps no
 * code (fail closed, spec section 5). The `log` transport is for development only and is
 * refused in production by the config.
 */
@Injectable()
export class Mailer implements OnApplicationShutdown {
  private readonly logger = new Logger('Mailer');
  private readonly transport: Transporter | null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const mail = config.mail;
    this.transport =
      mail.transport === 'smtp'
        ? createTransport(mail.smtpUrl, {
            connectionTimeout: config.dependencyTimeoutMs,
            greetingTimeout: config.dependencyTimeoutMs,
            socketTimeout: config.dependencyTimeoutMs * 2,
          })
        : null;
  }

  async send(mail: CodeMail): Promise<void> {
    const cfg = this.config.mail;
    switch (cfg.transport) {
      case 'none':
        throw new DependencyUnavailableError('mail');
      case 'log':
        // Development only: print the message so a developer can read the code in the console.
        process.stdout.write(`\n[dev mail] to=${mail.to} subject="${mail.subject}"\n${mail.text}\n\n`);
        return;
      case 'smtp':
        try {
          await this.transport?.sendMail({ from: cfg.from, to: mail.to, subject: mail.subject, text: mail.text });
        } catch (err) {
          // Only the error code: SMTP replies can quote the recipient address.
          this.logger.warn(
            { code: (err as { code?: unknown }).code, responseCode: (err as { responseCode?: unknown }).responseCode },
            'smtp delivery failed',
          );
          throw new DependencyUnavailableError('smtp', err);
        }
        return;
    }
  }

  onApplicationShutdown(): void {
    this.transport?.close();
  }
}
