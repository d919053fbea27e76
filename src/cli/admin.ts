import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { runAdmin } from './admin-runner';

// Library log lines (a Redis reconnect warning) must never mix into the JSON on stdout.
Logger.overrideLogger(false);

runAdmin(process.argv.slice(2), process.env).then(
  (result) => {
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exitCode = result.status;
  },
  (err: unknown) => {
    process.stderr.write(`${JSON.stringify({ error: 'failed', message: String(err) })}\n`);
    process.exitCode = 1;
  },
);
