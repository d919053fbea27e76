// The demo game: plays as a guest at once, then keeps the player's id when an email address or a
// chat account is attached. Everything about signing in goes through the guest SDK, unchanged.
import { GuestApiError, GuestClient, webStorage } from '/sdk/index.js';

const $ = (id) => document.getElementById(id);
const config = await (await fetch('/config.json')).json();

// One browser flow per tab, kept across the chat platform's redirect and across reloads.
const FLOW_KEY = 'star-clicker:browser-flow';
const storedFlow = sessionStorage.getItem(FLOW_KEY);
const auth = new GuestClient({
  baseUrl: config.baseUrl,
  tenantId: config.tenantId,
  clientId: config.clientId,
  // A page has no keystore: the refresh token survives a reload in localStorage (see the SDK's
  // README for the trade-off; this page admits no third-party script).
  storage: webStorage(localStorage),
  ...(storedFlow ? { browserFlowId: storedFlow } : {}),
});
sessionStorage.setItem(FLOW_KEY, auth.browserFlowId);

let email = '';
let mode = 'upgrade';

function say(text) {
  $('status').textContent = text;
}

function render() {
  $('player').hidden = auth.userId === null;
  $('save').hidden = auth.isGuest !== true;
  $('user-id').textContent = auth.userId ?? '';
  $('account-kind').textContent = auth.isGuest ? 'guest' : 'account';
  $('score').textContent = localStorage.getItem(`star-clicker:score:${auth.userId}`) ?? '0';
}

async function refreshOrNull() {
  try {
    return await auth.refresh();
  } catch (err) {
    if (err instanceof GuestApiError && (err.code === 'no_refresh_token' || err.code === 'invalid_grant')) return null;
    throw err;
  }
}

async function upgradeWith(proofId) {
  try {
    const upgraded = await auth.upgrade(proofId);
    say(
      `Saved: ${upgraded.linked_identity.provider === 'email' ? upgraded.linked_identity.email : 'chat account'} is attached to ${upgraded.user_id}.`,
    );
  } catch (err) {
    if (!(err instanceof GuestApiError) || err.code !== 'identity_in_use') throw err;
    $('in-use-text').textContent = 'That credential already belongs to another player account. Nothing was merged.';
    $('in-use').hidden = false;
    $('sign-in').hidden = email === '';
    say('identity_in_use');
  }
}

async function start() {
  const here = new URL(location.href);
  if (here.searchParams.has('proof_id') || here.searchParams.has('error')) {
    // Back from the chat platform at the client's redirect URI.
    history.replaceState(null, '', here.pathname);
    if (!(await refreshOrNull())) return say('The session ended; start again.');
    await upgradeWith(GuestClient.chatRedirectResult(here.toString()).proof_id);
    return;
  }
  if (await refreshOrNull()) return say(`Welcome back, ${auth.userId}.`);
  const guest = await auth.createGuest();
  say(`Playing as guest ${guest.user_id}.`);
}

function run(action) {
  return (event) => {
    event?.preventDefault();
    action()
      .catch((err) => say(err instanceof GuestApiError ? `${err.code}: ${err.description}` : String(err)))
      .finally(render);
  };
}

$('play').addEventListener(
  'click',
  run(async () => {
    const key = `star-clicker:score:${auth.userId}`;
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
    mode = 'sign-in';
    await auth.startEmail(email);
    $('code-form').hidden = false;
    say(`A sign-in code is on its way to ${email}.`);
  }),
);
$('chat').addEventListener(
  'click',
  run(async () => {
    await auth.createLinkingIntent();
    location.assign(await auth.chatAuthorizeUrl());
  }),
);

run(start)();
