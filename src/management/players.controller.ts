import { Controller, Param, Query } from '@nestjs/common';
import { Route } from '../http/route';
import { MANAGEMENT_ROUTES } from './management.routes';
import { PlayerSearchQuery, type PlayerSessionView, type PlayerView } from './players.dto';
import { PlayersService } from './players.service';
import { ForTenantAction, MemberTenant, type MemberTenantAccess } from './tenant-membership.guard';

/** A tenant's players and their sessions in the console (contract 15); roles in tenant-roles.ts. */
@Controller()
export class PlayersController {
  constructor(private readonly players: PlayersService) {}

  @Route(MANAGEMENT_ROUTES.findPlayer)
  @ForTenantAction('user.search')
  search(
    @MemberTenant() access: MemberTenantAccess,
    @Query() query: PlayerSearchQuery,
  ): Promise<{ users: PlayerView[] }> {
    return this.players.search(access, query.q);
  }

  @Route(MANAGEMENT_ROUTES.player)
  @ForTenantAction('user.read')
  show(
    @MemberTenant() access: MemberTenantAccess,
    @Param('userId') userId: string,
  ): Promise<{ user: PlayerView; sessions: PlayerSessionView[] }> {
    return this.players.show(access, userId);
  }

  @Route(MANAGEMENT_ROUTES.deactivatePlayer)
  @ForTenantAction('user.deactivate')
  deactivate(
    @MemberTenant() access: MemberTenantAccess,
    @Param('userId') userId: string,
  ): Promise<{ user: PlayerView }> {
    return this.players.deactivate(access, userId);
  }

  @Route(MANAGEMENT_ROUTES.erasePlayer)
  @ForTenantAction('user.delete')
  erase(@MemberTenant() access: MemberTenantAccess, @Param('userId') userId: string): Promise<{ deleted: true }> {
    return this.players.erase(access, userId);
  }

  @Route(MANAGEMENT_ROUTES.revokeSession)
  @ForTenantAction('session.revoke')
  revokeSession(
    @MemberTenant() access: MemberTenantAccess,
    @Param('sessionId') sessionId: string,
  ): Promise<{ revoked: boolean }> {
    return this.players.revokeSession(access, sessionId);
  }
}
