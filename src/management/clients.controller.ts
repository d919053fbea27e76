import { Body, Controller, Param } from '@nestjs/common';
import { CreateClientDto, UpdateClientDto, type ClientResponse } from './clients.dto';
import { ConsoleClientsService } from './clients.service';
import { MANAGEMENT_ROUTES } from './management.routes';
import { MemberTenant, TenantRoute, type MemberTenantAccess } from './tenant-membership.guard';

/** The console creates and edits a tenant's clients (contract 15); roles in tenant-roles.ts. */
@Controller()
export class ClientsController {
  constructor(private readonly clients: ConsoleClientsService) {}

  @TenantRoute(MANAGEMENT_ROUTES.createClient)
  create(@MemberTenant() access: MemberTenantAccess, @Body() body: CreateClientDto): Promise<ClientResponse> {
    return this.clients.create(access, body);
  }

  @TenantRoute(MANAGEMENT_ROUTES.updateClient)
  update(
    @MemberTenant() access: MemberTenantAccess,
    @Param('clientId') clientId: string,
    @Body() body: UpdateClientDto,
  ): Promise<ClientResponse> {
    return this.clients.update(access, clientId, body);
  }
}
