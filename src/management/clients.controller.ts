import { Body, Controller, Param, Patch, Post } from '@nestjs/common';
import { UsePolicy } from '../http/policy.decorator';
import { CreateClientDto, UpdateClientDto, type ClientResponse } from './clients.dto';
import { ConsoleClientsService } from './clients.service';
import { ForTenantAction, MemberTenant, type MemberTenantAccess } from './tenant-membership.guard';

/** The console creates and edits a tenant's clients (contract 15); roles in tenant-roles.ts. */
@Controller('management/tenants/:id/clients')
@UsePolicy('bearer:management')
export class ClientsController {
  constructor(private readonly clients: ConsoleClientsService) {}

  @Post()
  @ForTenantAction('client.create')
  create(@MemberTenant() access: MemberTenantAccess, @Body() body: CreateClientDto): Promise<ClientResponse> {
    return this.clients.create(access, body);
  }

  @Patch(':clientId')
  @ForTenantAction('client.update')
  update(
    @MemberTenant() access: MemberTenantAccess,
    @Param('clientId') clientId: string,
    @Body() body: UpdateClientDto,
  ): Promise<ClientResponse> {
    return this.clients.update(access, clientId, body);
  }
}
