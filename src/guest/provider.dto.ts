import { IsString, Matches, MaxLength } from 'class-validator';
import { OptionalField } from '../http/optional-field';
import { FlowBoundDto } from './guest.dto';

/** `POST providers/{id}/token`: an ID token the platform's own SDK obtained (contract 14). */
export class ProviderTokenDto extends FlowBoundDto {
  @IsString() @Matches(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/) @MaxLength(8192) id_token!: string;
  @OptionalField() @IsString() @MaxLength(256) nonce?: string;
}

/** `GET providers/go?handle=`: the one-time handle of a page's `authorize_url` (a 256-bit secret). */
export class ProviderBounceQueryDto {
  @IsString() @Matches(/^[A-Za-z0-9_-]{43}$/) handle!: string;
}

/**
 * The provider's redirect back: `code` and `state`, or `error` (RFC 6749 section 4.1.2.1), and
 * `iss` (RFC 9207). Extra parameters are accepted and never reflected.
 */
export class ProviderCallbackQueryDto {
  @OptionalField() @IsString() @MaxLength(2048) code?: string;
  @IsString() @MaxLength(128) state!: string;
  @OptionalField() @IsString() @Matches(/^[\x20-\x7e]{1,64}$/) error?: string;
  @OptionalField() @IsString() @MaxLength(512) error_description?: string;
  @OptionalField() @IsString() @MaxLength(2048) error_uri?: string;
  @OptionalField() @IsString() @MaxLength(2048) iss?: string;
}

/**
 * Sign in with Apple's form_post answer: the same fields, plus `user` (the name and email, on the
 * first authorization only) and `id_token`, which the service does not use: it takes the ID token
 * from its own code exchange.
 */
export class ProviderFormPostDto extends ProviderCallbackQueryDto {
  @OptionalField() @IsString() @MaxLength(4096) user?: string;
  @OptionalField() @IsString() @MaxLength(8192) id_token?: string;
}
