import { IsString, MaxLength } from 'class-validator';

/** `POST …/members` (contract 15); the rules are checkMember's, shared with `membership add`. */
export class AddMemberDto {
  @IsString() @MaxLength(320) email!: string;
  @IsString() @MaxLength(16) role!: string;
}

export interface MemberView {
  readonly user_id: string;
  readonly email: string | null;
  readonly role: string;
}
