import { IsString, MaxLength } from 'class-validator';
import { identityViews, type IdentityView } from '../directory/identity-view';
import type { PlayerSessionRow } from '../directory/player-lookup.repository';
import type { UserDetails } from '../directory/user-records.repository';

/** `GET …/users?q=`: an exact user id or an exact email address (contract 15); nothing else. */
export class PlayerSearchQuery {
  @IsString() @MaxLength(254) q!: string;
}

/** A player as the console shows it: `identities` as in `GET /t/{tenantId}/me` (contract 13). */
export interface PlayerView {
  readonly id: string;
  readonly guest: boolean;
  readonly status: string;
  readonly created_at: string;
  readonly identities: IdentityView[];
}

export interface PlayerSessionView {
  readonly id: string;
  readonly client_id: string;
  readonly created_at: string;
  readonly last_used_at: string | null;
}

export function toPlayerView(user: UserDetails): PlayerView {
  return {
    id: user.id,
    guest: user.kind === 'guest',
    status: user.status,
    created_at: user.createdAt.toISOString(),
    identities: identityViews(user),
  };
}

export function toPlayerSessionView(s: PlayerSessionRow): PlayerSessionView {
  return {
    id: s.id,
    client_id: s.clientId,
    created_at: s.createdAt.toISOString(),
    last_used_at: s.lastUsedAt?.toISOString() ?? null,
  };
}
