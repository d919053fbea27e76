/** The control-plane token endpoint's answer (contract 3), whichever grant issued it. */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly scope: string;
  readonly session_id: string;
}

export function tokenResponse(
  issued: { token: string; expiresIn: number },
  sessionId: string,
  scope: string,
  refreshToken: string,
): TokenResponse {
  return {
    access_token: issued.token,
    token_type: 'Bearer',
    expires_in: issued.expiresIn,
    refresh_token: refreshToken,
    scope,
    session_id: sessionId,
  };
}
