// The demo game: plays as a guest at once, then keeps the player's id when an email address, a
// chat account or an OpenID Connect provider's account (when config.json names one) is attached.
// Everything about signing in goes through the guest SDK, unchanged.
// Two tabs of the game share one player: the SDK makes them take turns to refresh (Web Locks),
// and this page follows what the other tab did (contract section 13).
import { GuestApiError, GuestClient } from '/sdk/index.js';

const $ = (id) => document.getElementById(id);
// Back from the chat platform or a provider at the client's redirect URI: the proof (or error) is
// in the query. It is useless without this browser's flow cookie, and is taken off the address
// before anything else runs, so it stays out of the history and of what other scripts later read.
const returned = new URLSearchParams(location.search);
const redirectReturn = returned.has('proof_id') || returned.has('error') ? location.href : null;
if (redirectReturn) history.replaceState(null, '', location.pathname);
// Which of them the page went to (both come back to the same address).
const AWAY_KEY = 'star-clicker:away';
const away = sessionStorage.getItem(AWAY_KEY);
sessionStorage.removeItem(AWAY_KEY);
/** `{ id, name }` of the tenant's OpenID Connect provider the game offers, if any. */
const config = await (await fetch('/config.json')).json();

// One browser flow per tab, kept across the chat platform's redirect and across reloads.
const FLOW_KEY = 'star-clicker:browser-flow';
const storedFlow = sessionStorage.getItem(FLOW_KEY);
const auth = new GuestClient({
  baseUrl: config.baseUrl,
  tenantId: config.tenantId,
  clientId: config.clientId,
  // No storage: the refresh token lives in the service's HttpOnly cookie, where no script of this
  // page can read it, and survives reloads there (the SDK's default in a browser, issue 22).
  ...(storedFlow ? { browserFlowId: storedFlow } : {}),
});
sessionStorage.setItem(FLOW_KEY, auth.browserFlowId);
/**
 * Off to a sign-in page that comes back to this tab. The flow id is stored again: the SDK moves to
 * a fresh flow when this one was claimed by a cookie the page never received (a lost answer).
 */
function leaveFor(kind, url) {
  sessionStorage.setItem(FLOW_KEY, auth.browserFlowId);
  sessionStorage.setItem(AWAY_KEY, kind);
  location.assign(url);
}
// For the browser's console and the Chromium tests: `starClicker.auth.refresh()`.
globalThis.starClicker = { auth };

let email = '';
let mode = 'upgrade';
/** A proof the upgrade refused with identity_in_use: kept by the service for signing in instead. */
let refusedProof = null;
/** The credentials attached to a full account, as `GET me` lists them. */
let identities = [];
/** Whether storage keeps the session, as the SDK's `persistence` event last said. */
let saved = true;

const scoreKey = (userId) => `star-clicker:score:${userId}`;

function say(text) {
  $('status').textContent = text;
}

/** What the player would call a credential: the email, the chat account, or the provider's account. */
function describe(identity) {
  if (identity.provider === 'email') return identity.email;
  if (identity.provider === 'chat_platform') return 'chat account';
  const name = identity.provider === config.provider?.id ? config.provider.name : identity.provider;
  return `${name} account ${identity.provider_subject}${identity.email ? ` (${identity.email})` : ''}`;
}

function render() {
  $('player').hidden = auth.userId === null;
  // Only a guest is lost with its session; an account signs in again anywhere.
  $('not-saved').hidden = saved || auth.isGuest !== true;
  $('save').hidden = auth.isGuest !== true;
  $('provider-choice').hidden = !config.provider;
  if (config.provider) $('provider').textContent = `Sign in with ${config.provider.name}`;
  const shown = auth.isGuest === false ? identities : [];
  $('linked').hidden = shown.length === 0;
  $('identities').textContent = shown.map(describe).join(', ');
  $('danger').hidden = auth.userId === null;
  $('user-id').textContent = auth.userId ?? '';
  $('account-kind').textContent = auth.isGuest ? 'guest' : 'account';
  $('score').textContent = localStorage.getItem(scoreKey(auth.userId)) ?? '0';
}

/** No session to go on with: none yet, refused, or no refresh cookie (expired, or the browser kept none). */
const ENDED = new Set(['no_refresh_token', 'invalid_grant', 'invalid_request']);

async function refreshOrNull() {
  try {
    return await auth.refresh();
  } catch (err) {
    if (err instanceof GuestApiError && ENDED.has(err.code)) return null;
    throw err;
  }
}

/** Tabs run this one at a time: the steps that decide which player the origin's tabs share. */
function exclusively(task) {
  return navigator.locks ? navigator.locks.request('star-clicker:player', task) : task();
}

let resuming = null;
/**
 * The stored session, or a new guest when there is none. Two tabs opened (or left without a
 * session) together end up on one guest, not two.
 */
function resume() {
  resuming ??= exclusively(async () => {
    if (await refreshOrNull()) return `Welcome back, ${auth.userId}.`;
    const guest = await auth.createGuest();
    return `Playing as guest ${guest.user_id}.`;
  }).finally(() => {
    resuming = null;
  });
  return resuming;
}

/** Catches up with what another tab did to the stored session; an ended one is handled below. */
function sync() {
  return auth.getAccessToken().then(
    () => undefined,
    (err) => {
      if (!(err instanceof GuestApiError) || !ENDED.has(err.code)) throw err;
    },
  );
}

/** The attached credentials of a full account (a guest has none to show), after each change of player. */
async function loadIdentities() {
  identities = auth.isGuest === false ? (await auth.me()).identities : [];
}

/**
 * `keepForSignIn`: a proof from a redirect, which the service keeps when it refuses the upgrade
 * with identity_in_use, so "Sign in to that account instead" needs no second round at the provider.
 */
async function upgradeWith(proofId, keepForSignIn) {
  try {
    const upgraded = await auth.upgrade(proofId);
    say(`Saved: ${describe(upgraded.linked_identity)} is attached to ${upgraded.user_id}.`);
  } catch (err) {
    if (!(err instanceof GuestApiError) || err.code !== 'identity_in_use') throw err;
    refusedProof = keepForSignIn ? proofId : null;
    $('in-use-text').textContent = 'That credential already belongs to another player account. Nothing was merged.';
    $('in-use').hidden = false;
    $('sign-in').hidden = email === '' && refusedProof === null;
    say('identity_in_use');
  }
}

async function start() {
  if (redirectReturn) {
    if (!(await refreshOrNull())) return say('The session ended; start again.');
    const result =
      away === 'provider'
        ? GuestClient.providerRedirectResult(redirectReturn)
        : GuestClient.chatRedirectResult(redirectReturn);
    await upgradeWith(result.proof_id, true);
    return;
  }
  say(await resume());
}

function run(action) {
  return (event) => {
    event?.preventDefault();
    action()
      .catch((err) => say(err instanceof GuestApiError ? `${err.code}: ${err.description}` : String(err)))
      .finally(render);
  };
}

// Another tab upgraded, signed in, or moved to a new guest: show that player. A session that ended
// here (revoked, erased in another tab) continues as the stored session or a fresh guest.
auth.on('user', () => run(loadIdentities)());
auth.on('session', (change) => {
  if (change.reason === 'ended') run(async () => say(`Your session ended. ${await resume()}`))();
});
// The browser refused to keep the session (localStorage full or blocked, or the refresh cookie
// refused on a page of another site): the guest is lost with this page unless the player attaches
// a credential. Said once, and once more when a write succeeds.
auth.on('persistence', (change) => {
  saved = change.saved;
  render();
});
// Another tab replaced or ended the session (the SDK shares its id, no secret, in localStorage), or
// caught a star: catch up now rather than at this tab's next refresh.
window.addEventListener('storage', (event) => {
  if (event.key?.endsWith(':cookie_session')) run(sync)();
  else render();
});

$('play').addEventListener(
  'click',
  run(async () => {
    const key = scoreKey(auth.userId);
    localStorage.setItem(key, String(Number(localStorage.getItem(key) ?? '0') + 1));
  }),
);
$('email-form').addEventListener(
  'submit',
  run(async () => {
    email = $('email').value.trim();
    mode = 'upgrade';
    await auth.createLinkingIntent();
    await auth.startEmail(email);
    // The code lives in this flow, which may be a fresh one: a reload before the code is typed keeps it.
    sessionStorage.setItem(FLOW_KEY, auth.browserFlowId);
    $('code-form').hidden = false;
    say(`A code is on its way to ${email}.`);
  }),
);
$('code-form').addEventListener(
  'submit',
  run(async () => {
    const { proof_id: proofId } = await auth.verifyEmail(email, $('code').value.trim());
    $('code').value = '';
    $('code-form').hidden = true;
    if (mode === 'sign-in') {
      const signedIn = await auth.signIn(proofId);
      $('in-use').hidden = true;
      say(`Signed in as ${signedIn.user_id}.`);
    } else {
      await upgradeWith(proofId);
    }
  }),
);
$('sign-in').addEventListener(
  'click',
  run(async () => {
    if (refusedProof !== null) {
      const signedIn = await auth.signIn(refusedProof);
      refusedProof = null;
      $('in-use').hidden = true;
      say(`Signed in as ${signedIn.user_id}.`);
      return;
    }
    mode = 'sign-in';
    await auth.startEmail(email);
    sessionStorage.setItem(FLOW_KEY, auth.browserFlowId);
    $('code-form').hidden = false;
    say(`A sign-in code is on its way to ${email}.`);
  }),
);
$('chat').addEventListener(
  'click',
  run(async () => {
    await auth.createLinkingIntent();
    const authorizeUrl = await auth.chatAuthorizeUrl();
    leaveFor('chat', authorizeUrl);
  }),
);
// The provider's sign-in page, through the service's bounce (the same way as the chat platform's).
$('provider').addEventListener(
  'click',
  run(async () => {
    await auth.createLinkingIntent();
    const authorizeUrl = await auth.providerAuthorizeUrl(config.provider.id);
    leaveFor('provider', authorizeUrl);
  }),
);
// App stores require in-app deletion, guests included; a second click confirms.
$('delete').addEventListener(
  'click',
  run(async () => {
    $('delete-confirm').hidden = false;
  }),
);
$('delete-cancel').addEventListener(
  'click',
  run(async () => {
    $('delete-confirm').hidden = true;
  }),
);
$('delete-yes').addEventListener(
  'click',
  run(async () => {
    const erased = auth.userId;
    // The fresh guest is made before another tab may look for a session, so the tabs share it.
    const guest = await exclusively(async () => {
      await auth.deleteAccount();
      return auth.createGuest();
    });
    localStorage.removeItem(scoreKey(erased));
    $('delete-confirm').hidden = true;
    say(`Account ${erased} deleted; playing as new guest ${guest.user_id}.`);
  }),
);

run(start)();
