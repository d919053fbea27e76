// Console page: plain JS, no framework, no inline code (strict CSP). It never sees a token:
// everything comes from same-origin /api/* calls that the browser authenticates with the
// HttpOnly session cookie.
(function () {
  'use strict';

  // The `/?error=` codes of the BFF callback, and the page's own, in words.
  var ERROR_WORDS = {
    invalid_state: 'That sign-in link has expired or was opened in another browser or tab. Please sign in again.',
    sign_in_failed: 'Sign-in did not complete. Please try again.',
    temporarily_unavailable: 'The service is temporarily unavailable. Please try again in a moment.',
    session_ended: 'Your session has ended. Please sign in again.',
    sign_out_failed: 'Sign-out could not be completed right now, so you are still signed in. Please try again.',
  };

  function $(id) {
    return document.getElementById(id);
  }

  function show(id, visible) {
    $(id).hidden = !visible;
  }

  function showError(code) {
    var el = $('error');
    el.textContent = ERROR_WORDS[code] || 'Something went wrong. Please try again.';
    el.hidden = false;
  }

  function api(path, init) {
    var options = init || {};
    options.credentials = 'same-origin';
    options.headers = { Accept: 'application/json' };
    return fetch(path, options).then(function (res) {
      if (res.status === 204) return { status: 204, body: null };
      return res
        .json()
        .catch(function () {
          return null;
        })
        .then(function (body) {
          return { status: res.status, body: body };
        });
    });
  }

  function signedOut() {
    show('loading', false);
    show('account', false);
    show('signed-in', false);
    show('signed-out', true);
  }

  function element(tag, text, className) {
    var el = document.createElement(tag);
    if (text !== undefined) el.textContent = text;
    if (className) el.className = className;
    return el;
  }

  function clientsTable(clients) {
    if (clients.length === 0) return element('p', 'No clients yet.', 'empty');
    var table = element('table');
    var labels = ['Client', 'Client ID', 'Type', 'Status', 'Scopes', 'Web origins'];
    var head = element('tr');
    labels.forEach(function (h) {
      head.appendChild(element('th', h));
    });
    table.appendChild(head);
    clients.forEach(function (c) {
      var row = element('tr');
      row.className = 'client';
      [
        c.name,
        c.client_id,
        c.type,
        c.enabled ? 'enabled' : 'disabled',
        c.scopes.join(' '),
        (c.web_origins || []).join(' '),
      ].forEach(function (v, i) {
        var cell = element('td', v);
        // On a phone each row becomes a card; the label stands in for the hidden header.
        cell.setAttribute('data-label', labels[i]);
        row.appendChild(cell);
      });
      table.appendChild(row);
    });
    return table;
  }

  function renderTenant(tenant) {
    var item = element('li', undefined, 'tenant');
    item.setAttribute('data-tenant-id', tenant.id);
    item.appendChild(element('h3', tenant.name));
    item.appendChild(element('p', tenant.id + ' · ' + tenant.role, 'meta'));
    var clients = element('div', 'Loading clients…', 'empty');
    item.appendChild(clients);
    $('tenants').appendChild(item);
    return api('/api/management/tenants/' + encodeURIComponent(tenant.id) + '/clients').then(function (r) {
      if (r.status === 401) throw new Error('session_ended');
      if (r.status !== 200 || !r.body) {
        clients.textContent = 'Clients could not be loaded.';
        return;
      }
      item.replaceChild(clientsTable(r.body.clients), clients);
    });
  }

  function loadTenants() {
    return api('/api/management/tenants').then(function (r) {
      if (r.status === 401) throw new Error('session_ended');
      if (r.status !== 200 || !r.body) throw new Error('temporarily_unavailable');
      var tenants = r.body.tenants;
      show('no-tenants', tenants.length === 0);
      return Promise.all(tenants.map(renderTenant));
    });
  }

  function load() {
    return api('/api/auth/current')
      .then(function (r) {
        if (r.status === 401) {
          signedOut();
          return;
        }
        if (r.status !== 200 || !r.body) {
          show('loading', false);
          showError('temporarily_unavailable');
          return;
        }
        $('email').textContent = r.body.user.email;
        show('loading', false);
        show('account', true);
        show('signed-in', true);
        return loadTenants();
      })
      .catch(function (err) {
        var code = err && err.message;
        if (code === 'session_ended') {
          signedOut();
          showError(code);
          return;
        }
        show('loading', false);
        showError('temporarily_unavailable');
      });
  }

  function signOut() {
    $('sign-out').disabled = true;
    api('/api/auth/sign-out', { method: 'POST' }).then(
      function (r) {
        $('sign-out').disabled = false;
        // 401: the session had already ended; either way the user is signed out now.
        if (r.status === 204 || r.status === 401) {
          $('tenants').textContent = '';
          $('email').textContent = '';
          show('error', false);
          signedOut();
          return;
        }
        showError('sign_out_failed');
      },
      function () {
        $('sign-out').disabled = false;
        showError('sign_out_failed');
      },
    );
  }

  document.addEventListener('DOMContentLoaded', function () {
    var params = new URLSearchParams(window.location.search);
    var error = params.get('error');
    if (error) {
      showError(error);
      // The code has been shown; drop it from the address so a reload does not repeat it.
      window.history.replaceState(null, '', '/');
    }
    $('sign-out').addEventListener('click', signOut);
    load();
  });
})();
