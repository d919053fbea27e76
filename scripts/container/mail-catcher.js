'use strict';
// Stand-in for mailpit in the container test's compose stack: accepts every message over SMTP
// (no AUTH; STARTTLS with the certificate and key that MP_SMTP_TLS_CERT and MP_SMTP_TLS_KEY name,
// as mailpit does) and lists them over HTTP with the two mailpit API calls the test reads:
// GET /api/v1/messages and GET /api/v1/message/{ID}. Listens where mailpit would be told to:
// MP_SMTP_BIND_ADDR and MP_UI_BIND_ADDR (host:port).
const fs = require('node:fs');
const net = require('node:net');
const tls = require('node:tls');
const http = require('node:http');

const secureContext =
  process.env.MP_SMTP_TLS_CERT && process.env.MP_SMTP_TLS_KEY
    ? tls.createSecureContext({
        cert: fs.readFileSync(process.env.MP_SMTP_TLS_CERT),
        key: fs.readFileSync(process.env.MP_SMTP_TLS_KEY),
      })
    : null;

const messages = [];

function hostPort(value, fallback) {
  const [host, port] = (value || fallback).split(/:(?=\d+$)/);
  return { host: host || '0.0.0.0', port: Number(port) };
}

function session(socket, secure) {
  let buffer = '';
  let data = null;
  let envelope = { from: '', to: [] };
  const reply = (line) => socket.write(`${line}\r\n`);
  if (!secure) reply('220 stand-in mail catcher');
  const onData = (chunk) => {
    buffer += chunk.toString('latin1');
    for (;;) {
      if (data !== null) {
        const end = buffer.indexOf('\r\n.\r\n');
        if (end < 0) return;
        data += buffer.slice(0, end);
        buffer = buffer.slice(end + 5);
        const raw = data.replace(/^\.\./gm, '.');
        const split = raw.indexOf('\r\n\r\n');
        const subject = /^Subject: (.*)$/im.exec(raw.slice(0, split))?.[1] ?? '';
        messages.push({
          ID: String(messages.length + 1),
          From: { Address: envelope.from },
          To: envelope.to.map((Address) => ({ Address })),
          Subject: subject,
          Text: split < 0 ? '' : raw.slice(split + 4),
          Created: new Date().toISOString(),
        });
        data = null;
        envelope = { from: '', to: [] };
        reply('250 queued');
        continue;
      }
      const eol = buffer.indexOf('\r\n');
      if (eol < 0) return;
      const line = buffer.slice(0, eol);
      buffer = buffer.slice(eol + 2);
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO') reply(secureContext && !secure ? '250-stand-in\r\n250 STARTTLS' : '250 stand-in');
      else if (verb === 'HELO') reply('250 stand-in');
      else if (line.toUpperCase() === 'STARTTLS' && secureContext && !secure) {
        reply('220 ready to start TLS');
        socket.off('data', onData);
        session(new tls.TLSSocket(socket, { isServer: true, secureContext }), true);
        return;
      } else if (verb === 'MAIL') {
        envelope.from = /<([^>]*)>/.exec(line)?.[1] ?? '';
        reply('250 ok');
      } else if (verb === 'RCPT') {
        envelope.to.push((/<([^>]*)>/.exec(line)?.[1] ?? '').toLowerCase());
        reply('250 ok');
      } else if (verb === 'DATA') {
        data = '';
        reply('354 end with <CRLF>.<CRLF>');
      } else if (verb === 'RSET' || verb === 'NOOP') reply('250 ok');
      else if (verb === 'QUIT') {
        reply('221 bye');
        socket.end();
        return;
      } else reply('502 not implemented');
    }
  };
  socket.on('data', onData);
  socket.on('error', () => {});
}

const smtp = net.createServer((socket) => session(socket, false));

const ui = http.createServer((req, res) => {
  const json = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const one = /^\/api\/v1\/message\/([^/]+)$/.exec(req.url ?? '');
  if (req.url === '/api/v1/messages') {
    const list = [...messages].reverse().map(({ Text, ...summary }) => ({ ...summary, Snippet: Text.slice(0, 250) }));
    json(200, { total: list.length, messages: list });
  } else if (one) {
    const message = messages.find((m) => m.ID === one[1]);
    if (message) json(200, message);
    else json(404, { error: 'not found' });
  } else if (req.url === '/livez') json(200, { ok: true });
  else json(404, { error: 'not found' });
});

const smtpAddr = hostPort(process.env.MP_SMTP_BIND_ADDR, '0.0.0.0:1025');
const uiAddr = hostPort(process.env.MP_UI_BIND_ADDR, '0.0.0.0:8025');
smtp.listen(smtpAddr.port, smtpAddr.host);
ui.listen(uiAddr.port, uiAddr.host);
// docker stop sends SIGTERM; as PID 1 a process must handle it itself.
process.on('SIGTERM', () => process.exit(0));
