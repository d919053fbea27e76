import { IsString, Matches, MaxLength } from 'class-validator';
import { EmailField } from '../http/email-field';
import { OptionalField } from '../http/optional-field';
import { CLIENT_ID_PATTERN, FLOW_ID_PATTERN, PROOF_ID_PATTERN } from '../directory/identifiers';

/** `{client_id, browser_flow_id}`: every guest-facing body starts with these (contract 6). */
export class FlowBoundDto {
  @IsString() @Matches(CLIENT_ID_PATTERN) client_id!: string;
  @IsString()
  @Matches(FLOW_ID_PATTERN, { message: `browser_flow_id must match ${FLOW_ID_PATTERN.source}` })
  browser_flow_id!: string;
}

export class LinkingIntentDto extends FlowBoundDto {
  @OptionalField() @IsString() @Matches(PROOF_ID_PATTERN) upgrade_proof_id?: string;
}

export class ProofDto extends FlowBoundDto {
  @IsString() @Matches(PROOF_ID_PATTERN) proof_id!: string;
}

export class TenantEmailStartDto extends FlowBoundDto {
  @EmailField() email!: string;
}

export class TenantEmailVerifyDto extends TenantEmailStartDto {
  @IsString() @Matches(/^\d{6}$/, { message: 'code must be six digits' }) code!: string;
}

export class ChatStartQueryDto extends FlowBoundDto {}

/**
 * The platform's redirect back: `code` on consent; `error` (with `error_description` and
 * `error_uri`) when the player declined or the platform failed (RFC 6749 section 4.1.2.1); `iss`
 * from a platform that names itself (RFC 9207). `state` always. The extra parameters are accepted
 * and never reflected.
 */
export class ChatCallbackQueryDto {
  @OptionalField() @IsString() @MaxLength(512) code?: string;
  @IsString() @MaxLength(128) state!: string;
  @OptionalField() @IsString() @Matches(/^[\x20-\x7e]{1,64}$/) error?: string;
  @OptionalField() @IsString() @MaxLength(512) error_description?: string;
  @OptionalField() @IsString() @MaxLength(2048) error_uri?: string;
  @OptionalField() @IsString() @MaxLength(2048) iss?: string;
}

export class CustomerTokenDto {
  @OptionalField() @IsString() @MaxLength(64) grant_type?: string;
  @OptionalField() @IsString() @MaxLength(512) refresh_token?: string;
  @OptionalField() @IsString() @Matches(CLIENT_ID_PATTERN) client_id?: string;
}

export class CustomerRevokeDto {
  @OptionalField() @IsString() @MaxLength(4096) token?: string;
  @OptionalField() @IsString() @MaxLength(64) token_type_hint?: string;
  @OptionalField() @IsString() @Matches(CLIENT_ID_PATTERN) client_id?: string;
}
