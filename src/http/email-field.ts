import { applyDecorators } from '@nestjs/common';
import { IsEmail, IsString, Matches, MaxLength } from 'class-validator';
import { MAILBOX_ADDRESS } from '../platform/mail/mailbox-address';

/** A body field holding an address the service mails a code to (contract 4, 6): one rule for every form. */
export const EmailField = (): PropertyDecorator =>
  applyDecorators(
    IsString(),
    MaxLength(254),
    IsEmail(),
    Matches(MAILBOX_ADDRESS, { message: 'email must not have a quoted local part, a comment or an address literal' }),
  );
