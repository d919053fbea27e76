#!/usr/bin/env node
// Serves the demo game (demo/game/) and the built guest SDK (sdk/dist/ or another build) on a
// site of its own, so the game calls the auth API cross-site exactly as a game on a portal would.
// `npm run demo` starts it beside the service; the Chromium tests start it in-process.
'use strict';
const { createServer } = require('node:http');
const { readFile } = require('node:fs/promises');
const { join } = require('node:path');

const GAME_DIR = join(__dirname, '..', 'demo', 'game');
const PAGES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/game.js': ['game.js', 'text/javascript; charset=utf-8'],
  '/game.css': ['game.css', 'text/css; charset=utf-8'],
};

/**
 * `config` is the game's config.json; `provider` names the tenant's OpenID Connect provider the
 * game offers a button for (its id, and the name the player reads).
 * @param {{ host?: string, port?: number, sdkDir: string,
 *           config: { baseUrl: string, tenantId: string, clientId: string,
 *                     provider?: { id: string, name: string } } }} opts
 */
function startGameServer(opts) {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src 'self' ${opts.config.baseUrl}`,
    "img-src 'self'",
    "object-src 'none'",
    // Not covered by default-src: without it any site could frame the game.
    "frame-ancestors 'self'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://game.invalid').pathname;
    const send = (status, type, body) => {
      res.writeHead(status, { 'Content-Type': type, 'Content-Security-Policy': csp, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    const page = PAGES[path];
    let file;
    if (page) file = readFile(join(GAME_DIR, page[0])).then((b) => send(200, page[1], b));
    else if (path === '/config.json')
      file = Promise.resolve(send(200, 'application/json', JSON.stringify(opts.config)));
    else if (/^\/sdk\/[a-z-]+\.js$/.test(path))
      file = readFile(join(opts.sdkDir, path.slice('/sdk/'.length))).then((b) =>
        send(200, 'text/javascript; charset=utf-8', b),
      );
    else file = Promise.resolve(send(404, 'text/plain', 'not found'));
    file.catch(() => send(404, 'text/plain', 'not found'));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      resolve({
        origin: `http://${opts.host ?? '127.0.0.1'}:${port}`,
        close: () => new Promise((done) => server.close(() => done(undefined))),
      });
    });
  });
}

module.exports = { startGameServer };

if (require.main === module) {
  const env = process.env;
  startGameServer({
    host: env.GAME_HOST ?? '127.0.0.1',
    port: Number(env.GAME_PORT ?? 3001),
    sdkDir: join(__dirname, '..', 'sdk', 'dist'),
    config: {
      baseUrl: env.AUTH_ORIGIN ?? 'http://localhost:3000',
      tenantId: env.GAME_TENANT ?? 'demo',
      clientId: env.GAME_CLIENT_ID ?? 'cli_demo_game',
      ...(env.GAME_PROVIDER_ID
        ? { provider: { id: env.GAME_PROVIDER_ID, name: env.GAME_PROVIDER_NAME ?? env.GAME_PROVIDER_ID } }
        : {}),
    },
  }).then(
    ({ origin }) => process.stdout.write(`game page: ${origin}/\n`),
    (err) => {
      process.stderr.write(`game server: ${err.message}\n`);
      process.exit(1);
    },
  );
}
