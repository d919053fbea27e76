// The console page: Preact components written with htm tagged templates, loaded as ES modules
// from this origin (no bundler, no inline code: the strict CSP holds). It never sees a token:
// everything comes from same-origin /api/* calls that the browser authenticates with the
// HttpOnly session cookie.
import { render } from './preact.mjs';
import { ApiError, ROLES_CHANGED, SESSION_ENDED, TENANTS, api } from './api.js';
import { AuditView } from './audit.js';
import { ClientsView } from './clients.js';
import { DashboardView } from './dashboard.js';
import { MembersView } from './members.js';
import { PlayersView } from './players.js';
import { Alert, Component, can, html } from './ui.js';

// The `/?error=` codes of the BFF callback, and the page's own, in words.
const ERROR_WORDS = {
  invalid_state: 'That sign-in link has expired or was opened in another browser or tab. Please sign in again.',
  sign_in_failed: 'Sign-in did not complete. Please try again.',
  temporarily_unavailable: 'The service is temporarily unavailable. Please try again in a moment.',
  session_ended: 'Your session has ended. Please sign in again.',
  sign_out_failed: 'Sign-out could not be completed right now, so you are still signed in. Please try again.',
};

/** The tenant views, each with the ability its role needs (none: every member sees it). */
const VIEWS = [
  { id: 'dashboard', label: 'Dashboard', component: DashboardView },
  { id: 'clients', label: 'Clients', component: ClientsView },
  { id: 'players', label: 'Players', component: PlayersView, needs: 'readPlayers' },
  { id: 'audit', label: 'Audit trail', component: AuditView },
  { id: 'members', label: 'Members', component: MembersView },
];

/** `#/t/{tenantId}/{view}[/{userId}]` → where the page is; anything else is the tenant list. */
export function parseRoute(hash) {
  let parts;
  try {
    parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return { tenantId: null };
  }
  if (parts[0] !== 't' || !parts[1]) return { tenantId: null };
  const view = VIEWS.some((v) => v.id === parts[2]) ? parts[2] : 'dashboard';
  return { tenantId: parts[1], view, userId: view === 'players' ? parts[3] : undefined };
}

const tenantHref = (tenantId, view) => `#/t/${encodeURIComponent(tenantId)}${view ? `/${view}` : ''}`;

function TenantList({ tenants }) {
  return html`<section aria-labelledby="tenants-title">
    <h2 id="tenants-title">Your tenants</h2>
    ${tenants.length === 0 ? html`<p>You are not a member of any tenant yet.</p>` : null}
    <ul class="tenants">
      ${tenants.map(
        (t) =>
          html`<li class="tenant" key=${t.id} data-tenant-id=${t.id}>
            <h3><a href=${tenantHref(t.id)}>${t.name}</a></h3>
            <p class="meta">${t.id} · ${t.role}</p>
          </li>`,
      )}
    </ul>
  </section>`;
}

function Workspace({ tenant, route, user }) {
  const views = VIEWS.filter((v) => !v.needs || can(tenant.role, v.needs));
  const current = views.find((v) => v.id === route.view) || views[0];
  const View = current.component;
  return html`<div class="workspace">
    <p class="crumb"><a href="#/">All tenants</a></p>
    <div class="tenant-head">
      <h2>${tenant.name}</h2>
      <span class="badge role">${tenant.role}</span>
    </div>
    <nav aria-label="Tenant">
      <ul class="tabs">
        ${views.map(
          (v) =>
            html`<li>
              <a href=${tenantHref(tenant.id, v.id)} aria-current=${v === current ? 'page' : undefined}>${v.label}</a>
            </li>`,
        )}
      </ul>
    </nav>
    <${View} key=${`${tenant.id}/${current.id}`} tenant=${tenant} userId=${route.userId} user=${user} />
  </div>`;
}

function SignedOut() {
  return html`<section>
    <p>Sign in with your work email to see your tenants.</p>
    <form method="post" action="/api/auth/start">
      <button type="submit">Sign in</button>
    </form>
  </section>`;
}

class App extends Component {
  state = { phase: 'loading', user: null, tenants: [], error: this.props.error, route: parseRoute(location.hash) };

  componentDidMount() {
    this.onHash = () => this.setState({ route: parseRoute(location.hash) });
    this.onEnded = () => this.setState({ phase: 'signed-out', user: null, tenants: [], error: 'session_ended' });
    this.onRoles = () => this.reloadTenants();
    window.addEventListener('hashchange', this.onHash);
    window.addEventListener(SESSION_ENDED, this.onEnded);
    window.addEventListener(ROLES_CHANGED, this.onRoles);
    this.load();
  }

  componentWillUnmount() {
    window.removeEventListener('hashchange', this.onHash);
    window.removeEventListener(SESSION_ENDED, this.onEnded);
    window.removeEventListener(ROLES_CHANGED, this.onRoles);
  }

  /** The roles as the server now has them; the open view keeps its state and redraws with them. */
  reloadTenants() {
    if (this.state.phase !== 'signed-in') return;
    api(TENANTS).then(
      ({ tenants }) => this.setState({ tenants }),
      () => undefined,
    );
  }

  async load() {
    try {
      const { user } = await api('/api/auth/current');
      const { tenants } = await api(TENANTS);
      this.setState({ phase: 'signed-in', user, tenants });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        // No session at all is the ordinary signed-out page; a session ending midway says so.
        this.setState((s) => ({ phase: 'signed-out', error: s.user ? 'session_ended' : s.error }));
        return;
      }
      this.setState({ phase: 'unavailable', error: 'temporarily_unavailable' });
    }
  }

  signOut = () => {
    this.setState({ signingOut: true });
    api('/api/auth/sign-out', { method: 'POST' })
      .then(
        () => this.setState({ phase: 'signed-out', user: null, tenants: [], error: null }),
        (err) =>
          err.status === 401
            ? this.setState({ phase: 'signed-out', user: null, tenants: [], error: null })
            : this.setState({ error: 'sign_out_failed' }),
      )
      .finally(() => this.setState({ signingOut: false }));
  };

  main() {
    const { phase, tenants, route, user } = this.state;
    if (phase === 'loading') return html`<p>Loading…</p>`;
    if (phase === 'signed-out') return html`<${SignedOut} />`;
    if (phase !== 'signed-in') return null;
    const tenant = route.tenantId && tenants.find((t) => t.id === route.tenantId);
    if (route.tenantId && !tenant)
      return html`<p>You are not a member of that tenant. <a href="#/">See your tenants</a>.</p>`;
    return tenant
      ? html`<${Workspace} tenant=${tenant} route=${route} user=${user} />`
      : html`<${TenantList} tenants=${tenants} />`;
  }

  render(_, { phase, user, error, signingOut }) {
    return html`<header class="top">
        <h1><a href="#/">Console</a></h1>
        ${
          phase === 'signed-in'
            ? html`<div class="account">
                <span class="who">Signed in as <strong id="email">${user.email}</strong></span>
                <button type="button" class="light" disabled=${signingOut} onClick=${this.signOut}>Sign out</button>
              </div>`
            : null
        }
      </header>
      <main>
        <${Alert} message=${error ? ERROR_WORDS[error] || 'Something went wrong. Please try again.' : null} />
        ${this.main()}
      </main>`;
  }
}

const error = new URLSearchParams(location.search).get('error');
// The code is shown once; drop it from the address so a reload does not repeat it.
if (error) history.replaceState(null, '', `/${location.hash}`);
render(html`<${App} error=${error} />`, document.getElementById('app'));
