import type { TokenRequestDto } from './management-auth.dto';

/** A control-plane token request: the client its Basic credentials proved, and the strict body. */
export interface ClientTokenRequest {
  readonly clientId: string;
  readonly body: TokenRequestDto;
}
