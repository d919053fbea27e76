#!/usr/bin/env node
// The framework's floor for `npm run bench`: a bare NestJS app on Express with one static route,
// built from the service's own @nestjs packages and nothing else (no middleware, guard, pipe or
// logger). PORT; answers GET /healthz and GET /readyz with {"status":"ok"}.
'use strict';
require('reflect-metadata');
const { Controller, Get, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');

class StaticController {
  status() {
    return { status: 'ok' };
  }
}
// Decorators applied by hand: this file is plain JavaScript, run without a build.
Get(['healthz', 'readyz'])(
  StaticController.prototype,
  'status',
  Object.getOwnPropertyDescriptor(StaticController.prototype, 'status'),
);
Controller()(StaticController);

class BareModule {}
Module({ controllers: [StaticController] })(BareModule);

NestFactory.create(BareModule, { logger: false })
  .then((app) => app.listen(Number(process.env.PORT)))
  .catch((err) => {
    process.stderr.write(`bare-nest: ${err.stack}\n`);
    process.exit(1);
  });
