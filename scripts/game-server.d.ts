export function startGameServer(opts: {
  host?: string;
  port?: number;
  sdkDir: string;
  config: { baseUrl: string; tenantId: string; clientId: string };
}): Promise<{ origin: string; close(): Promise<void> }>;
