/** What a guest-facing controller hands its service from the HTTP request. */
export interface GuestRequestContext {
  readonly tenantId: string;
  readonly clientId: string;
  readonly flowId: string;
  /** The `__Host-svc_flow_{flowId}` cookie, when the browser sent one. */
  readonly flowCookie: string | undefined;
  readonly ip: string;
}

/** A service result plus the flow cookie the response must set when the request started a flow. */
export interface WithFlowCookie<T> {
  readonly body: T;
  readonly newFlowCookie?: { readonly flowId: string; readonly value: string };
}

export function guestContext(
  req: { headers: { cookie?: string } },
  ip: string,
  tenantId: string,
  body: { client_id: string; browser_flow_id: string },
  readCookie: (header: string | undefined, name: string) => string | undefined,
  cookieName: (flowId: string) => string,
): GuestRequestContext {
  return {
    tenantId,
    clientId: body.client_id,
    flowId: body.browser_flow_id,
    flowCookie: readCookie(req.headers.cookie, cookieName(body.browser_flow_id)),
    ip,
  };
}
