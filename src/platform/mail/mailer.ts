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
      mail.transport === 'smtp' ? createTransport(pooledSmtpUrl(mail.smtpUrl, config.dependencyTimeoutMs)) : null;
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

/**
 * SMTP_URL with the transport options nodemailer reads from a URL's query (an options object
 * next to a URL would be ignored). Pooled connections: a code mail then costs MAIL, RCPT and DATA
 * on an open session instead of a new TCP connection, greeting, EHLO and QUIT each time, which
 * made the SMTP exchange the largest wait of a console sign-in. An idle connection closes after
 * the socket timeout, and a failed send still fails the request (spec section 5). Options the
 * operator put in SMTP_URL win.
 */
export function pooledSmtpUrl(smtpUrl: string, timeoutMs: number): string {
  const url = new URL(smtpUrl);
  const defaults: Record<string, number | boolean> = {
    pool: true,
    maxConnections: 5,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs * 2,
  };
  for (const [name, value] of Object.entries(defaults))
    if (!url.searchParams.has(name)) url.searchParams.set(name, String(value));
  return url.toString();
}
