import { Injectable } from '@nestjs/common';
import { identityViews, type IdentityView } from '../directory/identity-view';
import { UserErasure } from '../directory/user-erasure';
import { UserRecordsRepository, type PlayerAccount } from '../directory/user-records.repository';
import { AppError } from '../errors/app-error';
import type { PrincipalOf } from '../http/principal';

export interface MeResponse {
  user: {
    id: string;
    guest: boolean;
    created_at: string;
    identities: IdentityView[];
  };
}

export function toMeResponse(user: PlayerAccount): MeResponse {
  return {
    user: {
      id: user.id,
      guest: user.kind === 'guest',
      created_at: user.createdAt.toISOString(),
      identities: identityViews(user),
    },
  };
}

/**
 * A player's own account (contract 13: players keep their accounts, and can delete them, as app
 * stores require, guests included). The caller is a customer bearer with a live session.
 */
@Injectable()
export class MeService {
  constructor(
    private readonly users: UserRecordsRepository,
    private readonly erasure: UserErasure,
  ) {}

  async show(player: PrincipalOf<'guest'>): Promise<MeResponse> {
    const user = await this.users.findAccount(player.tenantId, player.userId);
    if (!user) throw gone();
    return toMeResponse(user);
  }

  /** Erases the caller exactly as `user delete` does, recorded as asked for by the user. */
  async delete(player: PrincipalOf<'guest'>): Promise<{ deleted: true }> {
    const erased = await this.erasure.erase(player.tenantId, player.userId, 'self');
    if (!erased) throw gone();
    return { deleted: true };
  }
}

/**
 * The user was erased after the bearer check passed (a concurrent DELETE won): the token names no
 * one any more, which is what every later request with it is told too.
 */
function gone(): AppError {
  return new AppError('unauthorized', undefined, { challenge: 'bearer' });
}
