import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { GrantTypeFirst } from '../http/grant-type-first.guard';
import { UsePolicy } from '../http/policy.decorator';
import type { CustomerTokenSet } from './customer-sessions';
import { CustomerTokenService } from './customer-token.service';
import { CustomerRevokeDto, CustomerTokenDto } from './guest.dto';
import { TenantIdPipe } from './tenant-id.pipe';

/** Public clients (browser and native) authenticate by client_id only, as RFC 6749 allows. */
@Controller('t/:tenantId')
@UsePolicy('public')
export class CustomerTokenController {
  constructor(private readonly tokens: CustomerTokenService) {}

  @Post('token')
  @HttpCode(200)
  @UseGuards(new GrantTypeFirst(['refresh_token']))
  token(@Param('tenantId', TenantIdPipe) tenantId: string, @Body() body: CustomerTokenDto): Promise<CustomerTokenSet> {
    return this.tokens.refresh(tenantId, body);
  }

  @Post('revoke')
  @HttpCode(200)
  async revoke(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: CustomerRevokeDto,
  ): Promise<Record<string, never>> {
    await this.tokens.revoke(tenantId, body);
    return {};
  }
}
