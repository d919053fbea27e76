import { Controller, Param, Query } from '@nestjs/common';
import { MANAGEMENT_ROUTES } from './management.routes';
import { PlayerSearchQuery, type PlayerSessionView, type PlayerView } from './players.dto';
import { PlayersService } from './players.service';
import { MemberTenant, TenantRoute, type MemberTenantAccess } from './tenant-membership.guard';

/** A tenant's players and their sessions in the console (contract 15); roles in tenant-roles.ts. */
@Controller()
export class PlayersController {
  constructor(private readonly players: PlayersService) {}

  @TenantRoute(MANAGEMENT_ROUTES.findPlayer)
  search(
    @MemberTenant() access: MemberTenantAccess,
    @Query() query: PlayerSearchQuery,
  ): Promise<{ users: PlayerView[] }> {
    return this.players.search(access, query.q);
  }

  @TenantRoute(MANAGEMENT_ROUTES.player)
  show(
    @MemberTenant() access: MemberTenantAccess,
    @Param('userId') userId: string,
  ): Promise<{ user: PlayerView; sessions: PlayerSessionView[] }> {
    return this.players.show(access, userId);
  }

  @TenantRoute(MANAGEMENT_ROUTES.deactivatePlayer)
  deactivate(
    @MemberTenant() access: MemberTenantAccess,
    @Param('userId') userId: string,
  ): Promise<{ user: PlayerView }> {
    return this.players.deactivate(access, userId);
  }

  @TenantRoute(MANAGEMENT_ROUTES.erasePlayer)
  erase(@MemberTenant() access: MemberTenantAccess, @Param('userId') userId: string): Promise<{ deleted: true }> {
    return this.players.erase(access, userId);
  }

  @TenantRoute(MANAGEMENT_ROUTES.revokeSession)
  revokeSession(
    @MemberTenant() access: MemberTenantAccess,
    @Param('sessionId') sessionId: string,
  ): Promise<{ revoked: boolean }> {
    return this.players.revokeSession(access, sessionId);
  }
}
