/** HTML of the hosted sign-in form and its error page. No inline script or style (strict CSP). */
const escape = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const layout = (title: string, body: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(title)}</title>
<link rel="icon" href="/management-auth/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/management-auth/assets/sign-in.css">
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;

export function signInPage(flowId: string, codeTtlSeconds: number): string {
  return layout(
    'Sign in to the console',
    `<h1>Sign in to the console</h1>
<form id="email-form" data-flow-id="${escape(flowId)}" novalidate>
  <label for="email">Email address</label>
  <input id="email" name="email" type="email" autocomplete="email" required maxlength="254" autofocus>
  <button type="submit">Send code</button>
</form>
<form id="code-form" hidden novalidate>
  <p id="code-hint">We sent a six-digit code. It is valid for ${Math.round(codeTtlSeconds / 60)} minutes.</p>
  <label for="code">Code</label>
  <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
  <button type="submit">Sign in</button>
  <p class="code-actions">
    <button type="button" id="resend-code" class="link">Send a new code</button>
    <button type="button" id="change-email" class="link">Use another email</button>
  </p>
</form>
<p id="status" role="status" aria-live="polite"></p>
<script src="/management-auth/assets/sign-in.js" defer></script>`,
  );
}

export function errorPage(message: string): string {
  return layout('Sign-in error', `<h1>Sign-in cannot continue</h1>\n<p>${escape(message)}</p>`);
}
