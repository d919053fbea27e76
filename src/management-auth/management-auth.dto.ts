import { IsString, Matches, MaxLength } from 'class-validator';
import { EmailField } from '../http/email-field';
import { OptionalField } from '../http/optional-field';
import { FLOW_ID_PATTERN, SESSION_ID_PATTERN } from '../directory/identifiers';

export class EmailStartDto {
  @IsString() @Matches(FLOW_ID_PATTERN) flow_id!: string;
  @EmailField() email!: string;
}

export class EmailConfirmDto extends EmailStartDto {
  @IsString() @Matches(/^\d{6}$/, { message: 'code must be six digits' }) code!: string;
}

export class TokenRequestDto {
  @IsString() @MaxLength(64) @OptionalField() grant_type?: string;
  @IsString() @MaxLength(512) @OptionalField() code?: string;
  @IsString() @MaxLength(2048) @OptionalField() redirect_uri?: string;
  @IsString() @MaxLength(256) @OptionalField() code_verifier?: string;
  @IsString() @MaxLength(512) @OptionalField() refresh_token?: string;
}

export class RevokeSessionDto {
  @IsString() @Matches(SESSION_ID_PATTERN) session_id!: string;
}
