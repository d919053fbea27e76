import { simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CaughtMessage {
  /** Envelope recipients, lower-cased. */
  readonly to: string[];
  readonly from: string;
  readonly subject: string;
  readonly text: string;
}

export interface WaitOptions {
  /** Give up after this many milliseconds (default 5000). */
  readonly timeoutMs?: number;
  /** Only consider messages at this index of `messages` or later (default 0). */
  readonly after?: number;
}

/** A real SMTP server for tests: the service delivers over SMTP and tests read what arrived. */
export class SmtpCatcher {
  readonly messages: CaughtMessage[] = [];
  private failing = false;
  private readonly refusedRecipients = new Set<string>();
  /** When set, DATA is read, handed to this hook, then answered 554: the mail "fails" after it was seen. */
  beforeFailingData: ((message: CaughtMessage) => Promise<void>) | null = null;
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
  ) {}

  static async start(): Promise<SmtpCatcher> {
    const ref: { catcher?: SmtpCatcher } = {};
    const server = new SMTPServer({
      authOptional: true,
      // Plain SMTP without auth: STARTTLS would need a certificate, and AUTH is never used.
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      // stop() should not wait the default 30 s for a client that keeps its connection open.
      closeTimeout: 200,
      onRcptTo(address, _session, cb) {
        if (ref.catcher?.failing) return cb(smtpError('mailbox unavailable', 451));
        // As real servers do, the permanent refusal quotes the address.
        if (ref.catcher?.refusedRecipients.has(address.address.toLowerCase()))
          return cb(smtpError(`5.1.1 <${address.address}>: Recipient address rejected: User unknown`, 550));
        cb();
      },
      onData(stream, session, cb) {
        const hook = ref.catcher?.beforeFailingData;
        if (hook) {
          simpleParser(stream)
            .then(async (parsed) => {
              await hook({
                to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                subject: parsed.subject ?? '',
                text: parsed.text ?? '',
              });
              cb(smtpError('transaction failed', 554));
            })
            .catch((err: Error) => cb(err));
          return;
        }
        if (ref.catcher?.failing) {
          // The stream must be drained before answering, or the session stalls.
          stream.on('end', () => cb(smtpError('transaction failed', 554)));
          stream.resume();
          return;
        }
        simpleParser(stream)
          .then((parsed) => {
            ref.catcher?.push({
              to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
            });
            cb();
          })
          .catch((err: Error) => cb(err));
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (server.server.address() as AddressInfo).port;
    ref.catcher = new SmtpCatcher(server, `smtp://127.0.0.1:${port}`);
    return ref.catcher;
  }

  /** While true, every RCPT TO gets 451 and every DATA 554, so the sender sees a failure. */
  setFailing(failing: boolean): void {
    this.failing = failing;
  }

  /** RCPT TO for this address gets a permanent 550, as for a mailbox that does not exist. */
  refuseRecipient(address: string): void {
    this.refusedRecipients.add(address.toLowerCase());
  }

  countFor(to: string): number {
    const addr = to.toLowerCase();
    return this.messages.filter((m) => m.to.includes(addr)).length;
  }

  clear(): void {
    this.messages.length = 0;
  }

  /** The first message at index `after` or later addressed to `to` (case-insensitive). */
  async waitForMessage(to: string, opts: WaitOptions = {}): Promise<CaughtMessage> {
    const timeoutMs = opts.timeoutMs ?? 5000;
    const after = opts.after ?? 0;
    const addr = to.toLowerCase();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.slice(after).find((m) => m.to.includes(addr));
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `SmtpCatcher: no mail to ${to} (from index ${after}) within ${timeoutMs} ms; ` +
            `${this.messages.length} message(s) caught in all`,
        );
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  /** The six-digit code in the text body of the next matching message. */
  async waitForCode(to: string, opts: WaitOptions = {}): Promise<string> {
    const message = await this.waitForMessage(to, opts);
    const code = /\b(\d{6})\b/.exec(message.text)?.[1];
    if (!code) throw new Error(`SmtpCatcher: mail to ${to} has no six-digit code in its text body`);
    return code;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private push(message: CaughtMessage): void {
    this.messages.push(message);
    for (const wake of [...this.waiters]) wake();
  }
}

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}
