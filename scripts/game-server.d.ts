export function startGameServer(opts: {
  host?: string;
  port?: number;
  sdkDir: string;
  config: { baseUrl: string; tenantId: string; clientId: string; provider?: { id: string; name: string } };
}): Promise<{ origin: string; close(): Promise<void> }>;
