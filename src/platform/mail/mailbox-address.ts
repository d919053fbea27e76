import { isEmail } from 'class-validator';

/**
 * What `IsEmail` accepts, less a quoted local part, a comment or an address literal. Those are
 * valid RFC 5322, but mail libraries and relays disagree on them: nodemailer before 7.0.7 read
 * `"a@evil.test x"@studio.com` as `a@evil.test`, so a code for one address reached another mailbox
 * and the sign-in verified an address its owner never received. Nobody signs up with them;
 * refusing them at the edge keeps the address the service checks the one every later reader sees.
 */
const PLAIN_ADDRESS = /^[^\s"<>()[\]\\,;:@]+@[^\s"<>()[\]\\,;:@]+$/;

/** The one rule for an address the service mails a code to and keeps as an identity. */
export function isMailboxAddress(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && PLAIN_ADDRESS.test(value) && isEmail(value);
}
