import { Logger } from '@nestjs/common';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, type ErrorCode } from '../errors/app-error';
import { loggedPath, mintRequestId, requestId } from '../platform/logging/logging';
import type { HeaderList } from './response-headers';

interface Refusal {
  readonly status: number;
  readonly code: ErrorCode;
  readonly description: string;
}

/**
 * The statuses Node gives its parser's refusals (lib/_http_server.js, socketOnError), kept: a
 * proxy or client may act on a 431 or 408. Every other parser error is a malformed request.
 */
const REFUSALS: Readonly<Record<string, Refusal>> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'invalid_request',
    description: 'The request headers are larger than 16 KiB.',
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    status: 413,
    code: 'payload_too_large',
    description: 'The chunk extensions of the request body are too large.',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'invalid_request',
    description: 'The request did not arrive in time.',
  },
};
const MALFORMED: Refusal = { status: 400, code: 'invalid_request', description: 'The request is not valid HTTP/1.1.' };
const EXPECTATION_FAILED: Refusal = {
  status: 417,
  code: 'invalid_request',
  description: 'The only expectation this service meets is 100-continue.',
};

const logger = new Logger('HttpParser');

/**
 * Requests Node's HTTP layer refuses never reach Express, so neither the request logger nor the
 * error filter sees them, and Node's own answer is a bare status line. Here they are answered like
 * every other refusal (contract sections 2 and 10): the error body, `X-Request-Id`, the security
 * headers, and one log line.
 */
export function answerParserRefusals(server: Server, headers: HeaderList): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => refuseUnparsed(err, socket, headers));
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => refuseExpectation(req, res, headers));
}

/**
 * A request the parser could not read. The log line names the parser's error code and holds no
 * byte of the request (`err.rawPacket`), which may carry credentials.
 */
function refuseUnparsed(err: NodeJS.ErrnoException, socket: Duplex, headers: HeaderList): void {
  // A reset peer reads nothing, and a second answer on a connection whose answer has begun would
  // corrupt it: Node's default handler gives up on both the same way.
  if (err.code === 'ECONNRESET' || !socket.writable || answerStarted(socket)) {
    socket.destroy();
    return;
  }
  const refusal = (err.code === undefined ? undefined : REFUSALS[err.code]) ?? MALFORMED;
  const id = mintRequestId();
  // The parser stops at the error, so the connection cannot carry another request.
  socket.end(rawAnswer(refusal, id, headers), () => socket.destroy());
  logger.log(
    { req: { id }, res: { statusCode: refusal.status }, parserError: err.code },
    'request refused by the HTTP parser',
  );
}

/**
 * An `Expect` other than 100-continue, which Node answers with a bare 417 instead of handing the
 * request on (RFC 9110 section 10.1.1). The request is parsed, so its id is echoed like any other.
 */
function refuseExpectation(req: IncomingMessage, res: ServerResponse, headers: HeaderList): void {
  const id = requestId(req, res);
  for (const [name, value] of headers) res.setHeader(name, value);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.statusCode = EXPECTATION_FAILED.status;
  res.end(bodyOf(EXPECTATION_FAILED));
  const path = loggedPath((req.url ?? '').split('?')[0] ?? '');
  logger.log(
    { req: { id, method: req.method, path }, res: { statusCode: EXPECTATION_FAILED.status } },
    'request refused: unsupported expectation',
  );
}

/** Whether this connection's current answer has sent its head (Node keeps it as `_httpMessage`). */
function answerStarted(socket: Duplex): boolean {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
}

function bodyOf(refusal: Refusal): string {
  return JSON.stringify(errorBody(refusal.code, refusal.description));
}

function rawAnswer(refusal: Refusal, id: string, headers: HeaderList): string {
  const body = bodyOf(refusal);
  const head = [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}`,
    ...headers.map(([name, value]) => `${name}: ${value}`),
    'Cache-Control: no-store',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${id}`,
    'Connection: close',
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}
