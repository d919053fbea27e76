import { Logger } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerParserRefusals } from '../../src/http/parser-refusals';
import { rawExchange, rawTranscript } from '../support/raw-http';

/**
 * The statuses of parser refusals an e2e test cannot provoke cheaply (a header timeout needs the
 * server's checking interval shortened), and the connections no answer may be written on.
 */
describe('answerParserRefusals', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    Logger.overrideLogger(false);
    server = createServer({ headersTimeout: 200, requestTimeout: 400, connectionsCheckingInterval: 50 }, (req, res) => {
      // An answer that has begun and never ends: what a refusal must not write into.
      if (req.url === '/slow') res.writeHead(200, { 'Content-Type': 'text/plain' }).write('begun');
      else req.resume().on('end', () => res.end('ok'));
    });
    answerParserRefusals(server, [['X-Content-Type-Options', 'nosniff']]);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    Logger.overrideLogger(true);
  });

  it('answers headers that do not arrive in time with 408 in the error shape', async () => {
    const res = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: a.example\r\nX-Slow: 1\r\n');
    expect(res.status).toBe(408);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  it('answers chunk extensions over the limit with 413 payload_too_large', async () => {
    const res = await rawExchange(
      port,
      `POST / HTTP/1.1\r\nHost: a.example\r\nTransfer-Encoding: chunked\r\n\r\n1;${'x'.repeat(20 * 1024)}\r\na\r\n0\r\n\r\n`,
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ error: 'payload_too_large', error_description: expect.any(String) });
  });

  it('writes nothing into an answer that has begun: the connection is closed instead', async () => {
    const sent = await rawTranscript(port, 'GET /slow HTTP/1.1\r\nHost: a.example\r\n\r\nGARBAGE\r\n\r\n');
    expect(sent).not.toMatch(/ 400 |invalid_request/);
  });

  it('still serves a well-formed request', async () => {
    const res = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: a.example\r\nContent-Length: 0\r\n\r\n');
    expect([res.status, res.body]).toEqual([200, 'ok']);
  });
});
