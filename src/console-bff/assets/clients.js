// Clients: list, create, edit names, scopes, redirect URIs and web origins, disable and enable.
// The rules on URIs (https outside loopback, no fragment, no userinfo) are the server's: the page
// sends what was typed and shows the server's error_description.
import { api, describeError, segment, tenantPath } from './api.js';
import { Alert, Component, Confirm, Notice, Table, can, html, keepFocus, lines, words } from './ui.js';

const TYPES = ['browser', 'native', 'confidential'];

/** The form's text fields for a client (arrays as one line or one entry per line). */
function formOf(client) {
  return {
    name: client ? client.name : '',
    type: client ? client.type : 'browser',
    scopes: client ? client.scopes.join(' ') : 'openid offline_access',
    redirect_uris: client ? (client.redirect_uris || []).join('\n') : '',
    web_origins: client ? (client.web_origins || []).join('\n') : '',
  };
}

function bodyOf(form) {
  return {
    name: form.name.trim(),
    type: form.type,
    scopes: words(form.scopes),
    redirect_uris: lines(form.redirect_uris),
    web_origins: lines(form.web_origins),
  };
}

/** Only what changed goes into the PATCH, so a field the list did not carry is never overwritten. */
function changesOf(before, after) {
  const changes = {};
  for (const key of ['name', 'scopes', 'redirect_uris', 'web_origins']) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) changes[key] = after[key];
  }
  return changes;
}

/** Redirect URIs or origins, one a line; long URLs may break anywhere rather than widen the table. */
function urlList(urls) {
  return html`<ul class="plain urls">
    ${(urls || []).map((u) => html`<li>${u}</li>`)}
  </ul>`;
}

class ClientForm extends Component {
  constructor(props) {
    super(props);
    this.state = { form: formOf(props.client), error: null, busy: false };
  }

  componentDidMount() {
    this.restore = keepFocus(this.nameInput);
    this.nameInput.focus();
  }

  // Saved or cancelled, focus goes back to the button that opened the form (or the heading).
  componentWillUnmount() {
    queueMicrotask(this.restore);
  }

  field(key) {
    return (e) => this.setState({ form: { ...this.state.form, [key]: e.currentTarget.value } });
  }

  submit = (e) => {
    e.preventDefault();
    const { client, onSave } = this.props;
    const body = bodyOf(this.state.form);
    let request;
    if (client) {
      const changes = changesOf(bodyOf(formOf(client)), body);
      if (Object.keys(changes).length === 0) return this.props.onCancel();
      request = { method: 'PATCH', body: changes };
    } else {
      request = { method: 'POST', body };
    }
    const back = keepFocus();
    this.setState({ busy: true, error: null });
    onSave(request).catch((err) => this.setState({ busy: false, error: describeError(err) }, back));
  };

  render({ client, onCancel }, { form, error, busy }) {
    const id = client ? `edit-${client.client_id}` : 'new-client';
    const title = client ? `Edit ${client.name}` : 'New client';
    const redirectHint =
      client && !client.redirect_uris
        ? '(one per line; leave empty to keep the current ones, anything typed replaces them)'
        : '(one per line)';
    return html`<form class="panel" aria-labelledby=${`${id}-title`} onSubmit=${this.submit}>
      <h4 id=${`${id}-title`}>${title}</h4>
      <${Alert} message=${error} />
      <label for=${`${id}-name`}>Name</label>
      <input
        id=${`${id}-name`}
        ref=${(el) => (this.nameInput = el)}
        required
        maxlength="100"
        value=${form.name}
        onInput=${this.field('name')}
      />
      ${
        client
          ? null
          : html`<label for=${`${id}-type`}>Type</label>
              <select id=${`${id}-type`} value=${form.type} onChange=${this.field('type')}>
                ${TYPES.map((t) => html`<option value=${t}>${t}</option>`)}
              </select>`
      }
      <label for=${`${id}-scopes`}>Scopes <span class="hint">(separated by spaces)</span></label>
      <input id=${`${id}-scopes`} value=${form.scopes} onInput=${this.field('scopes')} />
      <label for=${`${id}-redirects`}>Redirect URIs <span class="hint">${redirectHint}</span></label>
      <textarea id=${`${id}-redirects`} rows="3" value=${form.redirect_uris} onInput=${this.field('redirect_uris')} />
      <label for=${`${id}-origins`}
        >Web origins <span class="hint">(one per line, e.g. https://play.example)</span></label
      >
      <textarea id=${`${id}-origins`} rows="3" value=${form.web_origins} onInput=${this.field('web_origins')} />
      <div class="actions">
        <button type="submit" disabled=${busy}>${client ? 'Save changes' : 'Create client'}</button>
        <button type="button" class="secondary" disabled=${busy} onClick=${onCancel}>Cancel</button>
      </div>
    </form>`;
  }
}

export class ClientsView extends Component {
  state = { clients: null, error: null, notice: null, editing: null, creating: false, busy: null, disabling: null };

  componentDidMount() {
    this.load();
  }

  path(rest = '') {
    return tenantPath(this.props.tenant.id, `/clients${rest}`);
  }

  load() {
    return api(this.path()).then(
      (body) => this.setState({ clients: body.clients }),
      (err) => this.setState({ error: describeError(err) }),
    );
  }

  create = (request) =>
    api(this.path(), request).then((body) =>
      this.reloadThen({ creating: false, notice: `Created ${body.client.name}: ${body.client.client_id}` }),
    );

  /** The notice of a change shows with the list read again, never beside the old one. */
  reloadThen(state) {
    return this.load().then(() => this.setState(state));
  }

  update(client) {
    return (request) =>
      api(this.path(segment(client.client_id)), request).then((body) =>
        this.reloadThen({ editing: null, notice: `Saved ${body.client.name}.` }),
      );
  }

  toggle(client) {
    // A confirmation returns focus itself, to the button that asked.
    const back = this.state.disabling ? undefined : keepFocus();
    this.setState({ busy: client.client_id, error: null, notice: null });
    api(this.path(segment(client.client_id)), { method: 'PATCH', body: { enabled: !client.enabled } })
      .then((body) =>
        this.reloadThen({ notice: `${body.client.name} is ${body.client.enabled ? 'enabled' : 'disabled'}.` }),
      )
      .catch((err) => this.setState({ error: describeError(err) }))
      .finally(() => this.setState({ busy: null, disabling: null }, back));
  }

  /** Disabling stops every game using the client, so it asks first; enabling does not. */
  confirmDisable(client) {
    return html`<${Confirm}
      id="confirm-disable"
      question=${`Disable ${client.name}?`}
      detail=${`Games using ${client.client_id} can no longer sign players in with it until it is enabled again.`}
      action="Disable the client"
      busy=${this.state.busy === client.client_id}
      onConfirm=${() => this.toggle(client)}
      onCancel=${() => this.setState({ disabling: null })}
    />`;
  }

  actions(client) {
    const busy = this.state.busy === client.client_id;
    return html`<div class="row-actions">
      <button
        type="button"
        class="secondary"
        aria-label=${`Edit ${client.name}`}
        onClick=${() => this.setState({ editing: client.client_id, creating: false, notice: null })}
      >
        Edit
      </button>
      <button
        type="button"
        class=${client.enabled ? 'danger' : 'secondary'}
        disabled=${busy}
        aria-label=${`${client.enabled ? 'Disable' : 'Enable'} ${client.name}`}
        onClick=${() =>
          client.enabled ? this.setState({ disabling: client, error: null, notice: null }) : this.toggle(client)}
      >
        ${client.enabled ? 'Disable' : 'Enable'}
      </button>
    </div>`;
  }

  table(clients, writer) {
    if (clients.length === 0) return html`<p class="muted">No clients yet.</p>`;
    // The list of contract 5 may not carry redirect URIs (a created or saved client does).
    const showRedirects = clients.some((c) => Array.isArray(c.redirect_uris));
    const columns = [
      ['Client', (c) => c.name],
      ['Client ID', (c) => html`<code>${c.client_id}</code>`],
      ['Type', (c) => c.type],
      [
        'Status',
        (c) => html`<span class=${c.enabled ? 'badge ok' : 'badge off'}>${c.enabled ? 'enabled' : 'disabled'}</span>`,
      ],
      ['Scopes', (c) => c.scopes.join(' ')],
      ...(showRedirects ? [['Redirect URIs', (c) => urlList(c.redirect_uris)]] : []),
      ['Web origins', (c) => urlList(c.web_origins)],
      ...(writer ? [['Actions', (c) => this.actions(c)]] : []),
    ];
    return html`<${Table}
      labels=${columns.map(([label]) => label)}
      rows=${clients.map((c) => ({ key: c.client_id, className: 'client', cells: columns.map(([, cell]) => cell(c)) }))}
    />`;
  }

  form() {
    const { clients, editing, creating } = this.state;
    if (creating)
      return html`<${ClientForm} onSave=${this.create} onCancel=${() => this.setState({ creating: false })} />`;
    const client = clients && clients.find((c) => c.client_id === editing);
    if (!client) return null;
    return html`<${ClientForm}
      key=${client.client_id}
      client=${client}
      onSave=${this.update(client)}
      onCancel=${() => this.setState({ editing: null })}
    />`;
  }

  render({ tenant }, { clients, error, notice, creating, disabling }) {
    const writer = can(tenant.role, 'write');
    const start = () => this.setState({ creating: true, editing: null, notice: null });
    return html`<section aria-labelledby="clients-title">
      <div class="section-head">
        <h3 id="clients-title">Clients</h3>
        ${writer && !creating ? html`<button type="button" onClick=${start}>New client</button>` : null}
      </div>
      ${writer ? null : html`<p class="muted">Your role (${tenant.role}) can read clients but not change them.</p>`}
      <${Alert} message=${error} />
      <${Notice} message=${notice} />
      ${this.form()} ${disabling ? this.confirmDisable(disabling) : null}
      ${clients ? this.table(clients, writer) : error ? null : html`<p class="muted">Loading clients…</p>`}
    </section>`;
  }
}
