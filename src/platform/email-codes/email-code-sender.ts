import { Injectable } from '@nestjs/common';
import { Mailer } from '../mail/mailer';
import { EmailCodesStore, type CodeAllowance, type CodeRealm } from './email-codes.store';

/**
 * Issues a flow's email code and mails it. The code becomes usable only once the SMTP server
 * accepted the mail; a mail that failed leaves no usable code, even when removing it fails too
 * (contract section 8). An address the server permanently refuses is answered like any other
 * (no enumeration, contract section 3) and keeps no code; a server that cannot be reached is a
 * 503 (contract section 1).
 */
@Injectable()
export class EmailCodeSender {
  constructor(
    private readonly codes: EmailCodesStore,
    private readonly mailer: Mailer,
  ) {}

  async send(
    realm: CodeRealm,
    flowId: string,
    email: string,
    allowance: CodeAllowance,
    compose: (code: string) => { subject: string; text: string },
  ): Promise<void> {
    const code = await this.codes.issue(realm, flowId, email, allowance);
    const outcome = await this.mailer.send({ to: email, ...compose(code) }).catch(async (err: unknown) => {
      await this.codes.discard(realm, flowId).catch(() => undefined);
      throw err;
    });
    if (outcome === 'refused') await this.codes.discard(realm, flowId).catch(() => undefined);
    else await this.codes.activate(realm, flowId);
  }
}
