import 'reflect-metadata';
import { createApp } from './app.setup';
import { assertKeysUsable, loadConfig } from './config/config';
import { assertSupportedNode } from './platform/runtime/node-version';

async function main(): Promise<void> {
  assertSupportedNode();
  const config = loadConfig(process.env);
  await assertKeysUsable(config);
  const app = await createApp(config);
  // listen() runs the start-up checks (StartUpCheck: every migration applied, the control-plane
  // seed) before accepting connections.
  await (config.host === null ? app.listen(config.port) : app.listen(config.port, config.host)).catch(
    (err: NodeJS.ErrnoException) => {
      // Node's own message ("listen EADDRINUSE: address already in use …") names no variable.
      if (err.syscall !== 'listen') throw err;
      const { host, port } = config;
      const address =
        host === null ? `port ${port} of every interface` : `${host.includes(':') ? `[${host}]` : host}:${port}`;
      throw new Error(`HOST/PORT: the service cannot listen on ${address} (${err.code ?? err.message})`);
    },
  );
  process.stdout.write(
    `${JSON.stringify({ level: 30, time: Date.now(), msg: 'listening', port: config.port, host: config.host ?? 'all interfaces', node: process.versions.node, auth: config.authOrigin, console: config.consoleOrigin })}\n`,
  );
}

main().catch((err: unknown) => {
  // Configuration problems name variables, never values; anything else prints its message only.
  process.stderr.write(`svc-auth failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
