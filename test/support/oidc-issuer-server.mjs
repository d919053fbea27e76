// A real OpenID Connect issuer for the provider tests and `npm run demo`: panva's oidc-provider
// (ESM-only, so it runs as a child process of the test). Configured by the ISSUER_CONFIG
// environment variable (JSON):
//   { clients: [{ client_id, client_secret, redirect_uris }], apple?: { teamId, keyId, publicKeyPem },
//     port?: number, account?: { sub, email?, email_verified? }, loginPage?: { name } }
// With `apple` it behaves like Sign in with Apple where the tests need it: the token endpoint takes
// only client_secret_post, and the client secret must be an ES256 JWT signed with the team's key
// (checked here, then swapped for the registered secret); the email claim is sent only in the first
// ID token of an account, with email_verified as the string "true".
// Interactions sign in the account set by `POST /test/account` (at first `account`) and grant what
// was asked, so a test follows the whole browser flow over HTTP without a login page. With
// `loginPage` a person sees first which account is signed in, and where, and continues with a button
// (the demo, and the Chromium test that clicks through it). A fixed `port` keeps the issuer's URL,
// which `provider add` records, the same across restarts.
// Prints `READY <port>` once listening.
import { createServer } from 'node:http';
import { createPublicKey, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, importJWK } from 'jose';
import Provider from 'oidc-provider';

const config = JSON.parse(process.env.ISSUER_CONFIG ?? '{}');
const apple = config.apple ?? null;

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingJwk = {
  ...(await exportJWK(privateKey)),
  kid: `k-${randomBytes(4).toString('hex')}`,
  alg: 'RS256',
  use: 'sig',
};
const signingKey = await importJWK(signingJwk, 'RS256');
const { privateKey: foreignKey } = await generateKeyPair('RS256', { extractable: true });

let account = config.account ?? { sub: 'user-1', email: 'player@example.com', email_verified: true };
const emailSent = new Set();
const tokenRequests = [];

const server = createServer();
await new Promise((resolve) => server.listen(config.port ?? 0, '127.0.0.1', resolve));
const port = server.address().port;
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: config.clients.map((c) => ({
    ...c,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: apple ? 'client_secret_post' : (c.token_endpoint_auth_method ?? 'client_secret_basic'),
  })),
  jwks: { keys: [signingJwk] },
  clientAuthMethods: apple ? ['client_secret_post'] : ['client_secret_basic', 'client_secret_post'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => true },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  cookies: { keys: [randomBytes(16).toString('hex')] },
  async findAccount(_ctx, sub) {
    const known = sub === account.sub ? account : { sub };
    return {
      accountId: sub,
      async claims(use) {
        const claims = { sub };
        if (known.email === undefined) return claims;
        // Apple: the email comes once, in the first ID token of the account.
        if (apple && use === 'id_token') {
          if (emailSent.has(sub)) return claims;
          emailSent.add(sub);
        }
        return {
          ...claims,
          email: known.email,
          email_verified: apple ? String(known.email_verified) : known.email_verified,
        };
      },
    };
  },
});

const readBody = async (req) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
};
const json = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Who is signing in, and where: the page a person confirms before going back to the game. */
function loginPage(res, uid) {
  const who = account.email ?? account.sub;
  const name = escapeHtml(config.loginPage.name);
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(
    `<!doctype html><html lang="en"><meta charset="utf-8"><title>${name}</title><h1>${name}</h1>` +
      `<p id="signing-in">You are signing in at ${name} as <strong>${escapeHtml(who)}</strong>.</p>` +
      `<form method="post" action="/interaction/${escapeHtml(uid)}"><button id="continue" type="submit">Continue as ${escapeHtml(who)}</button></form>`,
  );
}

async function finishInteraction(req, res, details) {
  const grant = new provider.Grant({ accountId: account.sub, clientId: details.params.client_id });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: account.sub }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

async function checkAppleSecret(secret, clientId) {
  const key = createPublicKey(apple.publicKeyPem);
  const { payload, protectedHeader } = await jwtVerify(secret, key, {
    algorithms: ['ES256'],
    issuer: apple.teamId,
    subject: clientId,
    audience: issuer,
  });
  if (protectedHeader.kid !== apple.keyId) throw new Error('wrong kid');
  if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number' || payload.exp - payload.iat > 15_777_000)
    throw new Error('lifetime');
}

const handler = provider.callback();
server.on('request', async (req, res) => {
  try {
    const url = new URL(req.url, issuer);
    if (req.method === 'POST' && url.pathname === '/test/account') {
      account = JSON.parse(await readBody(req));
      return json(res, 200, account);
    }
    if (req.method === 'POST' && url.pathname === '/test/sign') {
      // Tokens the test shapes itself (expired, other audience, other issuer), signed with the
      // issuer's own key, or with a key it never published (`foreign`).
      const { claims, foreign } = JSON.parse(await readBody(req));
      const jwt = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: foreign ? 'k-unknown' : signingJwk.kid, typ: 'JWT' })
        .sign(foreign ? foreignKey : signingKey);
      return json(res, 200, { id_token: jwt });
    }
    if (req.method === 'GET' && url.pathname === '/test/token-requests') return json(res, 200, tokenRequests);
    if (url.pathname.startsWith('/interaction/') && (req.method === 'GET' || config.loginPage)) {
      const details = await provider.interactionDetails(req, res);
      if (config.loginPage && req.method === 'GET') return loginPage(res, details.uid);
      return await finishInteraction(req, res, details);
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const raw = await readBody(req);
      const body = Object.fromEntries(new URLSearchParams(raw));
      const basic = req.headers.authorization?.startsWith('Basic ') === true;
      tokenRequests.push({
        auth: basic ? 'client_secret_basic' : 'client_secret_post',
        code_verifier: body.code_verifier !== undefined,
      });
      if (apple) {
        const registered = config.clients.find((c) => c.client_id === body.client_id);
        try {
          await checkAppleSecret(body.client_secret ?? '', body.client_id);
        } catch {
          return json(res, 400, { error: 'invalid_client' });
        }
        body.client_secret = registered.client_secret;
      }
      // oidc-provider reads an already-consumed body from req.body.
      req.body = body;
    }
    return handler(req, res);
  } catch (err) {
    if (!res.headersSent) json(res, 500, { error: 'server_error', error_description: String(err) });
  }
});

process.stdout.write(`READY ${port}\n`);
