#!/usr/bin/env node
// `npm run demo` pipes the service's JSON log lines through this: pino-pretty, one readable line
// per entry, without the start-up noise (Nest's module and route-mapping lines), so the sign-in
// code the log mail transport prints is easy to find. Production keeps the JSON lines.
'use strict';
const { createInterface } = require('node:readline');
const { prettyFactory } = require('pino-pretty');

const STARTUP_NOISE = new Set(['RouterExplorer', 'RoutesResolver', 'InstanceLoader', 'NestFactory']);

const pretty = prettyFactory({
  colorize: process.stdout.isTTY === true,
  translateTime: 'HH:MM:ss',
  ignore: 'pid,hostname,service,context,req,res,responseTime',
  singleLine: false,
});

/** The readable form of one log line, or null for a line the demo does not show. */
function prettyLine(line) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return `${line}\n`;
  }
  if (entry === null || typeof entry !== 'object') return `${line}\n`;
  if (STARTUP_NOISE.has(entry.context)) return null;
  // A request line: method, path, status and time in one line instead of nested objects.
  if (entry.req && entry.res) {
    entry.msg = `${entry.req.method} ${entry.req.path} ${entry.res.statusCode} ${entry.responseTime ?? '?'} ms`;
  }
  return pretty(entry);
}

module.exports = { prettyLine };
if (require.main === module) {
  createInterface({ input: process.stdin }).on('line', (line) => {
    const out = prettyLine(line);
    if (out) process.stdout.write(out);
  });
}
