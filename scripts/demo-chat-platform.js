#!/usr/bin/env node
// A stand-in chat platform for `npm run demo` only (Discord-compatible, contract section 1): its
// authorize page asks for a user name and consents at once, so the demo needs no real platform
// account. The same name always gives the same platform user id. As Discord, it takes PKCE S256
// only: a code is bound to the authorize request's challenge, and its exchange must carry the
// matching verifier (none when there was no challenge). Never for production.
'use strict';
const { createServer } = require('node:http');
const { createHash, randomBytes } = require('node:crypto');

const port = Number(process.env.DEMO_CHAT_PORT ?? 3002);
const codes = new Map();
const tokens = new Map();

const escape = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const userFor = (name) => ({
  id: String(BigInt(`0x${createHash('sha256').update(name).digest('hex').slice(0, 12)}`)),
  username: name,
  global_name: name,
  email: null,
  verified: false,
});

// The S256 challenge of an authorize request: null without one, undefined when it is not S256.
function challengeOf(q) {
  const challenge = q.get('code_challenge');
  if (challenge === null || challenge === '') return null;
  return q.get('code_challenge_method') === 'S256' && /^[A-Za-z0-9_-]{43}$/.test(challenge) ? challenge : undefined;
}

// RFC 7636 section 4.6; a code issued without a challenge takes no verifier (RFC 9700 section 4.8.2).
function verifierMatches(challenge, verifier) {
  if (challenge === null) return verifier === null;
  if (verifier === null || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return createHash('sha256').update(verifier).digest('base64url') === challenge;
}

function readBody(req) {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(body));
  });
}

createServer((req, res) => {
  const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
  const json = (status, body) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && url.pathname === '/oauth2/authorize') {
    if (challengeOf(url.searchParams) === undefined) {
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('error', 'invalid_request');
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { Location: back.toString() });
      res.end();
      return;
    }
    const keep = ['redirect_uri', 'state', 'code_challenge', 'code_challenge_method']
      .map((k) => `<input type="hidden" name="${k}" value="${escape(url.searchParams.get(k) ?? '')}">`)
      .join('');
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><title>Demo chat platform</title><h1>Demo chat platform</h1>` +
        `<form action="/oauth2/consent"><label>User name <input name="username" value="star_player" required></label>` +
        `${keep}<button type="submit">Authorize the game</button></form>`,
    );
  } else if (req.method === 'GET' && url.pathname === '/oauth2/consent') {
    const code = randomBytes(18).toString('base64url');
    const challenge = challengeOf(url.searchParams);
    if (challenge === undefined) return json(400, { error: 'invalid_request' });
    codes.set(code, { user: userFor(url.searchParams.get('username') || 'star_player'), challenge });
    const back = new URL(url.searchParams.get('redirect_uri') ?? '');
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') ?? '');
    res.writeHead(302, { Location: back.toString() });
    res.end();
  } else if (req.method === 'POST' && url.pathname === '/api/v10/oauth2/token') {
    void readBody(req).then((body) => {
      const form = new URLSearchParams(body);
      const code = form.get('code') ?? '';
      const issued = codes.get(code);
      codes.delete(code);
      if (!issued || !verifierMatches(issued.challenge, form.get('code_verifier')))
        return json(400, { error: 'invalid_grant' });
      const token = randomBytes(18).toString('base64url');
      tokens.set(token, issued.user);
      json(200, { access_token: token, token_type: 'Bearer', expires_in: 600, scope: 'identify email' });
    });
  } else if (req.method === 'GET' && url.pathname === '/api/v10/users/@me') {
    const user = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (user) json(200, user);
    else json(401, { message: '401: Unauthorized', code: 0 });
  } else {
    json(404, { message: '404: Not Found', code: 0 });
  }
}).listen(port, '127.0.0.1', () => process.stdout.write(`demo chat platform: http://127.0.0.1:${port}/\n`));
