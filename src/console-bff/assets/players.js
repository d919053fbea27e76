// Players: find one by exact id or email, see identities and sessions, end a session, deactivate,
// erase. Deactivating and erasing ask first, naming the player.
import { api, describeError, segment, tenantPath } from './api.js';
import { Alert, Component, Confirm, Notice, Table, can, html, keep, keepFocus, when } from './ui.js';

/** How a person recognises a player: the first email of their identities, else the id. */
export function playerName(user) {
  const email = (user.identities || []).map((i) => i.email).find(Boolean);
  return email ? `${email} (${user.id})` : user.id;
}

function identityText(i) {
  return i.email && i.email !== i.provider_subject
    ? `${i.provider}: ${i.provider_subject} (${i.email})`
    : `${i.provider}: ${i.provider_subject}`;
}

function Identities({ identities }) {
  if (!identities || identities.length === 0) return html`<span class="muted">none (guest)</span>`;
  return html`<ul class="plain">
    ${identities.map((i) => html`<li>${identityText(i)}</li>`)}
  </ul>`;
}

class PlayerSearch extends Component {
  state = { q: '', users: null, error: null, busy: false };

  search = (e) => {
    e.preventDefault();
    this.find(this.state.q.trim());
  };

  /** A player changed in the detail below: the results are read again, so none is stale. */
  componentDidUpdate(previous) {
    if (previous.changes !== this.props.changes && this.state.searched) this.find(this.state.searched);
  }

  find(q) {
    if (!q) return;
    const back = keepFocus();
    this.setState({ busy: true, error: null, searched: q });
    api(tenantPath(this.props.tenant.id, `/users?q=${encodeURIComponent(q)}`))
      .then(
        (body) => this.setState({ users: body.users }),
        (err) => this.setState({ users: null, error: describeError(err) }),
      )
      .finally(() => this.setState({ busy: false }, back));
  }

  render({ tenant }, { q, users, error, busy }) {
    return html`<div>
      <form class="search" role="search" onSubmit=${this.search}>
        <label for="player-q">Player id or email</label>
        <div class="inline">
          <input
            id="player-q"
            type="search"
            required
            placeholder="usr_… or player@example.com"
            value=${q}
            onInput=${keep(this, 'q')}
          />
          <button type="submit" disabled=${busy}>Find</button>
        </div>
      </form>
      <${Alert} message=${error} />
      ${users && users.length === 0 ? html`<p class="muted">No player has that exact id or email.</p>` : null}
      ${
        users && users.length > 0
          ? html`<h4>Players found</h4>
              <${Table}
                labels=${['Player', 'Kind', 'Status', 'Created', 'Identities', '']}
                rows=${users.map((u) => ({
                  key: u.id,
                  className: 'player',
                  cells: [
                    html`<code>${u.id}</code>`,
                    u.guest ? 'guest' : 'account',
                    u.status,
                    when(u.created_at),
                    html`<${Identities} identities=${u.identities} />`,
                    html`<a
                      class="button secondary"
                      aria-label=${`Open ${u.id}`}
                      href=${`#/t/${encodeURIComponent(tenant.id)}/players/${encodeURIComponent(u.id)}`}
                      >Open</a
                    >`,
                  ],
                }))}
              />`
          : null
      }
    </div>`;
  }
}

/** The two changes that ask first; each method of PlayerDetail carries the key's name. */
const CONFIRMATIONS = {
  deactivate: {
    verb: 'Deactivate',
    detail: "All of the player's sessions end and they cannot sign in again.",
    action: 'Deactivate the player',
  },
  erase: {
    verb: 'Erase',
    detail: "The player's account, identities and sessions are deleted for good. This cannot be undone.",
    action: 'Erase the player for good',
  },
};

class PlayerDetail extends Component {
  state = { user: null, sessions: null, error: null, notice: null, confirming: null, busy: false, gone: false };

  componentDidMount() {
    this.load();
  }

  path(rest = '') {
    return tenantPath(this.props.tenant.id, `/users${segment(this.props.userId)}${rest}`);
  }

  load() {
    return api(this.path()).then(
      (body) => this.setState({ user: body.user, sessions: body.sessions }),
      (err) => this.setState({ error: describeError(err) }),
    );
  }

  run(request, done) {
    // A confirmation returns focus itself, to the button that asked.
    const back = this.state.confirming ? undefined : keepFocus();
    this.setState({ busy: true, error: null, notice: null });
    return request
      .then(done)
      .catch((err) => this.setState({ error: describeError(err) }))
      .finally(() => this.setState({ busy: false, confirming: null }, back));
  }

  endSession(session) {
    const path = tenantPath(this.props.tenant.id, `/sessions${segment(session.id)}/revoke`);
    this.run(api(path, { method: 'POST' }), () =>
      this.load().then(() => this.setState({ notice: `Session ${session.id} ended.` })),
    );
  }

  deactivate = () =>
    this.run(api(this.path('/deactivate'), { method: 'POST' }), () =>
      this.load().then(() => {
        this.setState({ notice: `${playerName(this.state.user)} is deactivated.` });
        this.props.onChange();
      }),
    );

  erase = () => {
    const name = playerName(this.state.user);
    this.run(api(this.path(), { method: 'DELETE' }), () => {
      this.setState({ gone: true, user: null, sessions: null, notice: `${name} is erased.` });
      this.props.onChange();
    });
  };

  confirmation(user) {
    const step = this.state.confirming && CONFIRMATIONS[this.state.confirming];
    if (!step) return null;
    return html`<${Confirm}
      id=${`confirm-${this.state.confirming}`}
      question=${`${step.verb} ${playerName(user)}?`}
      detail=${step.detail}
      action=${step.action}
      busy=${this.state.busy}
      onConfirm=${this[this.state.confirming]}
      onCancel=${() => this.setState({ confirming: null })}
    />`;
  }

  render({ tenant }, { user, sessions, error, notice, busy, gone }) {
    const writer = can(tenant.role, 'write');
    if (gone) return html`<${Notice} message=${notice} />`;
    if (!user) return error ? html`<${Alert} message=${error} />` : html`<p class="muted">Loading the player…</p>`;
    return html`<article class="panel" aria-labelledby="player-title">
      <h4 id="player-title">${playerName(user)}</h4>
      <${Alert} message=${error} />
      <${Notice} message=${notice} />
      <dl class="facts">
        <dt>Player id</dt>
        <dd><code>${user.id}</code></dd>
        <dt>Kind</dt>
        <dd>${user.guest ? 'guest' : 'account'}</dd>
        <dt>Status</dt>
        <dd>${user.status}</dd>
        <dt>Created</dt>
        <dd>${when(user.created_at)}</dd>
        <dt>Identities</dt>
        <dd><${Identities} identities=${user.identities} /></dd>
      </dl>
      <h5>Sessions</h5>
      ${
        sessions.length === 0
          ? html`<p class="muted">No live sessions.</p>`
          : html`<${Table}
              labels=${['Session', 'Client', 'Started', 'Last used', ...(writer ? [''] : [])]}
              rows=${sessions.map((s) => ({
                key: s.id,
                className: 'session',
                cells: [
                  html`<code>${s.id}</code>`,
                  html`<code>${s.client_id}</code>`,
                  when(s.created_at),
                  when(s.last_used_at),
                  ...(writer
                    ? [
                        html`<button
                          type="button"
                          class="danger"
                          disabled=${busy}
                          aria-label=${`End session ${s.id}`}
                          onClick=${() => this.endSession(s)}
                        >
                          End session
                        </button>`,
                      ]
                    : []),
                ],
              }))}
            />`
      }
      ${
        writer
          ? html`<div class="actions">
              ${
                user.status === 'active'
                  ? html`<button
                      type="button"
                      class="secondary"
                      disabled=${busy}
                      onClick=${() => this.setState({ confirming: 'deactivate' })}
                    >
                      Deactivate
                    </button>`
                  : null
              }
              <button
                type="button"
                class="danger"
                disabled=${busy}
                onClick=${() => this.setState({ confirming: 'erase' })}
              >
                Erase
              </button>
            </div>`
          : html`<p class="muted">Your role (${tenant.role}) can read players but not change them.</p>`
      }
      ${this.confirmation(user)}
    </article>`;
  }
}

export class PlayersView extends Component {
  state = { changes: 0 };

  changed = () => this.setState({ changes: this.state.changes + 1 });

  render({ tenant, userId }, { changes }) {
    if (!can(tenant.role, 'readPlayers'))
      return html`<p class="muted">
        Your role (${tenant.role}) cannot see players. Developers, admins and owners can.
      </p>`;
    return html`<section aria-labelledby="players-title">
      <h3 id="players-title">Players</h3>
      <${PlayerSearch} tenant=${tenant} changes=${changes} />
      ${
        userId
          ? html`<${PlayerDetail} key=${userId} tenant=${tenant} userId=${userId} onChange=${this.changed} />`
          : null
      }
    </section>`;
  }
}
