// Hosted sign-in form: email, then the six-digit code. Plain JS, no framework, no inline code.
(function () {
  'use strict';
  var emailForm = document.getElementById('email-form');
  var codeForm = document.getElementById('code-form');
  var statusEl = document.getElementById('status');
  var flowId = emailForm.getAttribute('data-flow-id');
  var email = '';

  var messages = {
    invalid_code: 'That code is not valid. Check it, or send a new code.',
    rate_limited: 'Too many attempts. Wait a little and try again.',
    forbidden: 'This sign-in session has expired. Start again from the console.',
    temporarily_unavailable: 'The service is temporarily unavailable. Try again shortly.',
    invalid_request: 'Please check what you entered.',
  };

  function say(text) {
    statusEl.textContent = text;
  }

  function post(path, body) {
    return fetch('/management-auth/email/' + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(body),
    }).then(function (res) {
      return res
        .json()
        .catch(function () {
          return {};
        })
        .then(function (json) {
          return { ok: res.ok, json: json };
        });
    });
  }

  function fail(json) {
    say(messages[json.error] || 'Something went wrong. Try again.');
  }

  // A new email/start for the same flow replaces the earlier code (contract section 3).
  function sendCode(sending, sent) {
    say(sending);
    post('start', { flow_id: flowId, email: email }).then(
      function (r) {
        if (!r.ok) {
          fail(r.json);
          return;
        }
        emailForm.hidden = true;
        codeForm.hidden = false;
        say(sent);
        document.getElementById('code').value = '';
        document.getElementById('code').focus();
      },
      function () {
        say('Network error. Try again.');
      },
    );
  }

  emailForm.addEventListener('submit', function (event) {
    event.preventDefault();
    email = document.getElementById('email').value.trim();
    if (!email) {
      say('Enter your email address.');
      return;
    }
    sendCode('Sending a code…', 'Check your inbox for the code.');
  });

  document.getElementById('resend-code').addEventListener('click', function () {
    sendCode('Sending a new code…', 'A new code is on its way; the earlier one no longer works.');
  });

  document.getElementById('change-email').addEventListener('click', function () {
    codeForm.hidden = true;
    emailForm.hidden = false;
    say('');
    document.getElementById('email').focus();
  });

  codeForm.addEventListener('submit', function (event) {
    event.preventDefault();
    var code = document.getElementById('code').value.trim();
    if (!/^[0-9]{6}$/.test(code)) {
      say('The code has six digits.');
      return;
    }
    say('Signing in…');
    post('confirm', { flow_id: flowId, email: email, code: code }).then(
      function (r) {
        if (!r.ok) {
          fail(r.json);
          return;
        }
        window.location.assign(r.json.redirect_to);
      },
      function () {
        say('Network error. Try again.');
      },
    );
  });
})();
