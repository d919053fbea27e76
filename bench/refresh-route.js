#!/usr/bin/env node
// An ablation server for `npm run bench`: the built service, unchanged, except that the handler
// of POST /management-auth/token is swapped for a plain function doing the same work. Every
// middleware (helmet, metrics, host routing, body rules, request logging) and the router stay as
// in production, so the differences to the real route are what Nest's route pipeline (guard,
// authenticator, pipes, parameter decorators, response handling), passport and request logging
// cost.
//   REFRESH_ROUTE=passport  the console client checked through passport.authenticate
//   REFRESH_ROUTE=direct    the strategy's check called without passport
//   REFRESH_ROUTE=unlogged  as direct, answered ahead of the request-logging middleware (pino-http
//                           and the log context), right after the body rules
// Never used by the service itself.
'use strict';
require('reflect-metadata');
const passport = require('passport');
const { createApp } = require('../dist/src/app.setup');
const { assertKeysUsable, loadConfig } = require('../dist/src/config/config');
const { TokenService } = require('../dist/src/management-auth/token.service');
const {
  ConsoleClientBasicStrategy,
  CONSOLE_BASIC_STRATEGY,
} = require('../dist/src/management-auth/console-client-basic.strategy');

async function main() {
  const mode = process.env.REFRESH_ROUTE;
  if (!['passport', 'direct', 'unlogged'].includes(mode))
    throw new Error('REFRESH_ROUTE must be passport, direct or unlogged');
  const config = loadConfig(process.env);
  await assertKeysUsable(config);
  const app = await createApp(config);
  await app.init();
  const tokens = app.get(TokenService);
  const strategy = app.get(ConsoleClientBasicStrategy);

  const unavailable = (res) => res.status(503).json({ error: 'temporarily_unavailable' });
  const answer = (res, client, body) => {
    if (!client) return void res.status(401).json({ error: 'invalid_client' });
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    tokens.exchange(client.clientId, body).then(
      (r) => res.json(r),
      (err) => res.status(err.status ?? 500).json({ error: err.code ?? 'server_error' }),
    );
  };
  const plain =
    mode === 'passport'
      ? (req, res, next) =>
          passport.authenticate(CONSOLE_BASIC_STRATEGY, { session: false }, (err, client) =>
            err ? unavailable(res) : answer(res, client, req.body),
          )(req, res, next)
      : (req, res) =>
          strategy.validate(req).then(
            (client) => answer(res, client, req.body),
            () => unavailable(res),
          );

  const router = app.getHttpAdapter().getInstance().router;
  if (mode === 'unlogged') {
    // A route layer of its own, moved to just after the last body rule (configureApp's middleware).
    router.route('/management-auth/token').post(plain);
    const bodyRulesEnd = router.stack.findIndex((l) => l.name === 'objectBody');
    if (bodyRulesEnd < 0) throw new Error('body rules not found');
    router.stack.splice(bodyRulesEnd + 1, 0, router.stack.pop());
  } else {
    const layer = router.stack.find(
      (l) => l.route && l.route.path === '/management-auth/token' && l.route.methods.post,
    );
    if (!layer) throw new Error('route POST /management-auth/token not found');
    layer.route.stack[0].handle = plain;
  }
  await app.listen(config.port);
}

main().catch((err) => {
  process.stderr.write(`refresh-route: ${err.stack}\n`);
  process.exit(1);
});
