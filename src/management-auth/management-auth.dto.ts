import { IsEmail, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { FLOW_ID_PATTERN, SESSION_ID_PATTERN } from '../directory/identifiers';

export class EmailStartDto {
  @IsString() @Matches(FLOW_ID_PATTERN) flow_id!: string;
  @IsString() @MaxLength(254) @IsEmail() email!: string;
}

export class EmailConfirmDto extends EmailStartDto {
  @IsString() @Matches(/^\d{6}$/, { message: 'code must be six digits' }) code!: string;
}

export class TokenRequestDto {
  @IsString() @MaxLength(64) @IsOptional() grant_type?: string;
  @IsString() @MaxLength(512) @IsOptional() code?: string;
  @IsString() @MaxLength(2048) @IsOptional() redirect_uri?: string;
  @IsString() @MaxLength(256) @IsOptional() code_verifier?: string;
  @IsString() @MaxLength(512) @IsOptional() refresh_token?: string;
}

export class RevokeSessionDto {
  @IsString() @Matches(SESSION_ID_PATTERN) session_id!: string;
}
