// The framework's floor for `npm run bench`: a bare NestJS app on Express with one static route,
// built from the service's own @nestjs packages and nothing else (no middleware, guard, pipe or
// logger). PORT; answers GET /healthz and GET /readyz with {"status":"ok"}.
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

@Controller()
class StaticController {
  @Get(['healthz', 'readyz'])
  status(): { status: string } {
    return { status: 'ok' };
  }
}

@Module({ controllers: [StaticController] })
class BareModule {}

NestFactory.create(BareModule, { logger: false })
  .then((app) => app.listen(Number(process.env.PORT)))
  .catch((err: Error) => {
    process.stderr.write(`bare-nest: ${err.stack}\n`);
    process.exit(1);
  });
