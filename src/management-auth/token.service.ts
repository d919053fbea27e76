import { Injectable } from '@nestjs/common';
import { GrantTable } from '../http/grant-table';
import { AuthorizationCodeGrant } from './authorization-code.grant';
import type { ClientTokenRequest } from './client-token-request';
import { RefreshTokenGrant } from './refresh-token.grant';
import type { TokenResponse } from './token-response';

/** The grant types of the management token endpoint (contract 3): the console's code, then refresh. */
export const MANAGEMENT_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

/** The management token endpoint: its table of grants. */
@Injectable()
export class TokenService {
  private readonly grants: GrantTable<(typeof MANAGEMENT_GRANT_TYPES)[number], ClientTokenRequest, TokenResponse>;

  constructor(code: AuthorizationCodeGrant, refresh: RefreshTokenGrant) {
    this.grants = new GrantTable({ authorization_code: code, refresh_token: refresh }, 'grant_type is required.');
  }

  exchange(request: ClientTokenRequest): Promise<TokenResponse> {
    return this.grants.answer(request.body.grant_type, request);
  }
}
