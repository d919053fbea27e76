import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { connect, type Socket } from 'node:net';
import { createTransport, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DependencyUnavailableError } from '../../errors/app-error';

export interface CodeMail {
  readonly to: string;
  readonly subject: string;
  /** The text body; the code is its only run of six digits (contract section 1). */
  readonly text: string;
}

/**
 * `refused`: the SMTP server permanently refused the recipient (RCPT answered 5xx). The address
 * cannot receive mail, which is the sender's business, not the requester's: answering it
 * differently from a delivered mail would tell anyone which addresses exist (contract section 3).
 */
export type MailOutcome = 'sent' | 'refused';

/**
 * Delivers one-time codes. With no working transport it throws 503 and the caller keeps no
 * code (fail closed, spec section 5). The `log` transport is for development only and is
 * refused in production by the config. Nothing logged or passed on names the recipient: SMTP
 * replies, and so nodemailer's messages, quote it.
 */
@Injectable()
export class Mailer implements OnApplicationShutdown {
  private readonly logger = new Logger('Mailer');
  private readonly transport: Transporter | null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const mail = config.mail;
    this.transport =
      mail.transport === 'smtp'
        ? smtpTransport(mail.smtpUrl, config.dependencyTimeoutMs, config.nodeEnv === 'production')
        : null;
  }

  async send(mail: CodeMail): Promise<MailOutcome> {
    const cfg = this.config.mail;
    switch (cfg.transport) {
      case 'none':
        throw new DependencyUnavailableError('mail');
      case 'log':
        // Development only: print the message so a developer can read the code in the console.
        process.stdout.write(`\n[dev mail] to=${mail.to} subject="${mail.subject}"\n${mail.text}\n\n`);
        return 'sent';
      case 'smtp':
        try {
          await this.transport?.sendMail({ from: cfg.from, to: mail.to, subject: mail.subject, text: mail.text });
          return 'sent';
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          const responseCode = (err as { responseCode?: unknown }).responseCode;
          const failure = { code: String(code), responseCode: Number(responseCode) || null };
          if (code === 'EENVELOPE' && typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600) {
            this.logger.warn(failure, 'smtp refused the recipient');
            return 'refused';
          }
          this.logger.warn(failure, 'smtp delivery failed');
          // The cause passed on carries only the codes, never nodemailer's message.
          throw new DependencyUnavailableError('smtp', new Error(`smtp ${failure.code} ${failure.responseCode}`));
        }
    }
  }

  onApplicationShutdown(): void {
    this.transport?.close();
  }
}

function smtpTransport(smtpUrl: string, timeoutMs: number, production: boolean): Transporter {
  const transport = createTransport(pooledSmtpUrl(smtpUrl, timeoutMs, production));
  // nodemailer's documented getSocket option, set on the transport it built from the URL (an
  // options object beside a URL would be ignored); a pool and a single connection both read it.
  (transport.transporter as SMTPPool | SMTPTransport).getSocket = connectWithoutNagle;
  return transport;
}

/**
 * SMTP_URL with the transport options nodemailer reads from a URL's query (an options object
 * next to a URL would be ignored). Pooled connections: a code mail then costs MAIL, RCPT and DATA
 * on an open session instead of a new TCP connection, greeting, EHLO and QUIT each time, which
 * made the SMTP exchange the largest wait of a console sign-in. An idle connection closes after
 * the socket timeout, and a failed send still fails the request (spec section 5). Options the
 * operator put in SMTP_URL win, except in production: there an `smtp://` connection must upgrade
 * with STARTTLS or fail (`requireTLS`, and `ignoreTLS` cannot switch it off), since the mail
 * carries a sign-in code and STARTTLS is otherwise opportunistic: an attacker on the path strips
 * it and reads the code (issue 22, point 6). `smtps://` is TLS from the first byte.
 */
export function pooledSmtpUrl(smtpUrl: string, timeoutMs: number, production = false): string {
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
  if (production && url.protocol === 'smtp:') {
    url.searchParams.set('requireTLS', 'true');
    url.searchParams.set('ignoreTLS', 'false');
  }
  return url.toString();
}

/**
 * SMTP connections without Nagle's algorithm. nodemailer writes a command, or a message's final
 * dot, as a small segment; with Nagle on it waits for the ACK of the previous one, which the
 * server delays (delayed ACK, up to 40 ms) while it has nothing to answer yet. Every code mail
 * took 44 ms instead of 1.3 ms against a local server, and the sign-in that sent it waited that
 * long. nodemailer greets, upgrades to TLS for smtps and times out commands on the socket it gets.
 */
export function connectWithoutNagle(
  options: Pick<SMTPPool.Options, 'host' | 'port' | 'secure' | 'connectionTimeout'>,
  callback: (err: Error | null, socketOptions?: { connection: Socket }) => void,
): void {
  // nodemailer's own defaults when the URL names no host or port.
  const port = Number(options.port) || (options.secure ? 465 : 587);
  const socket = connect({ host: options.host ?? 'localhost', port }).setNoDelay(true);
  const fail = (err: Error): void => {
    clearTimeout(timer);
    socket.destroy();
    callback(err);
  };
  const timer = setTimeout(
    () => fail(Object.assign(new Error('SMTP connection timeout'), { code: 'ETIMEDOUT' })),
    options.connectionTimeout ?? 10_000,
  );
  socket.once('error', fail);
  socket.once('connect', () => {
    clearTimeout(timer);
    socket.off('error', fail);
    callback(null, { connection: socket });
  });
}
