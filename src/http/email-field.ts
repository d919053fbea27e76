import { ValidateBy } from 'class-validator';
import { isMailboxAddress } from '../platform/mail/mailbox-address';

/** A body field holding an address the service mails a code to (contract 4, 6): one rule for every form. */
export const EmailField = (): PropertyDecorator =>
  ValidateBy({
    name: 'isMailboxAddress',
    validator: {
      validate: (value: unknown) => isMailboxAddress(value),
      defaultMessage: () =>
        'email must be an email address of at most 254 characters, without a quoted local part, a comment or an address literal',
    },
  });
