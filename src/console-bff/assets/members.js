// Members and their roles: every member reads the list; owners add a person by email with a role
// (an address already a member gets the new role) and remove members.
import { ROLES_CHANGED, api, describeError, segment, tenantPath } from './api.js';
import { Alert, Component, Confirm, Notice, Table, can, html, keep, keepFocus } from './ui.js';

const ROLES = [
  ['viewer', 'viewer (reads)'],
  ['developer', 'developer (also reads players)'],
  ['admin', 'admin (also changes clients, players)'],
  ['owner', 'owner (also changes members)'],
];

/** A member as a person reads it: the address, or the user id when the member has none. */
const nameOf = (member) => member.email || member.user_id;

export class MembersView extends Component {
  state = { members: null, email: '', role: 'viewer', error: null, notice: null, busy: false, removing: null };

  componentDidMount() {
    this.load();
  }

  path(rest = '') {
    return tenantPath(this.props.tenant.id, `/members${rest}`);
  }

  load() {
    return api(this.path()).then(
      (body) => this.setState({ members: body.members }),
      (err) => this.setState({ error: describeError(err) }),
    );
  }

  /** Runs a change; resolves true when it worked (the list is reloaded), false when it was refused. */
  run(request, notice) {
    const back = keepFocus();
    this.setState({ busy: true, error: null, notice: null });
    return request
      .then(() => this.load())
      .then(() => {
        this.setState({ notice, removing: null });
        // A change of one's own role changes what this page may offer, here and in every view.
        const me = this.state.members && this.state.members.find((m) => m.user_id === this.props.user.id);
        if (!me || me.role !== this.props.tenant.role) window.dispatchEvent(new Event(ROLES_CHANGED));
        return true;
      })
      .catch((err) => {
        this.setState({ error: describeError(err) });
        return false;
      })
      .finally(() => this.setState({ busy: false }, back));
  }

  add = (e) => {
    e.preventDefault();
    const email = this.state.email.trim();
    const role = this.state.role;
    this.run(api(this.path(), { method: 'POST', body: { email, role } }), `${email} is now ${role}.`).then(
      (ok) => ok && this.setState({ email: '' }),
    );
  };

  remove = () => {
    const member = this.state.removing;
    this.run(api(this.path(segment(member.user_id)), { method: 'DELETE' }), `${nameOf(member)} is no longer a member.`);
  };

  addForm() {
    const { email, role, busy } = this.state;
    return html`<form class="panel" aria-labelledby="add-member-title" onSubmit=${this.add}>
      <h4 id="add-member-title">Add a member or change a role</h4>
      <label for="member-email">Email</label>
      <input id="member-email" type="email" required autocomplete="off" value=${email} onInput=${keep(this, 'email')} />
      <label for="member-role">Role</label>
      <select id="member-role" value=${role} onChange=${keep(this, 'role')}>
        ${ROLES.map(([value, text]) => html`<option value=${value}>${text}</option>`)}
      </select>
      <div class="actions"><button type="submit" disabled=${busy}>Add member</button></div>
    </form>`;
  }

  removeButton(member) {
    return html`<button
      type="button"
      class="danger"
      disabled=${this.state.busy}
      aria-label=${`Remove ${nameOf(member)}`}
      onClick=${() => this.setState({ removing: member, notice: null })}
    >
      Remove
    </button>`;
  }

  confirmRemove(member) {
    return html`<${Confirm}
      id="confirm-remove"
      question=${`Remove ${nameOf(member)}?`}
      detail=${`${nameOf(member)} loses access to this tenant at once.`}
      action=${`Remove ${nameOf(member)}`}
      busy=${this.state.busy}
      onConfirm=${this.remove}
      onCancel=${() => this.setState({ removing: null })}
    />`;
  }

  render({ tenant, user }, { members, error, notice, removing }) {
    const owner = can(tenant.role, 'members');
    const table = () =>
      html`<${Table}
        labels=${['Email', 'Role', 'User id', '']}
        rows=${members.map((m) => ({
          key: m.user_id,
          className: 'member',
          cells: [
            m.email || html`<span class="muted">no address</span>`,
            m.role,
            html`<code>${m.user_id}</code>`,
            m.user_id === user.id ? html`<span class="muted">you</span>` : owner ? this.removeButton(m) : null,
          ],
        }))}
      />`;
    return html`<section aria-labelledby="members-title">
      <h3 id="members-title">Members</h3>
      ${owner ? this.addForm() : html`<p class="muted">Only owners add and remove members.</p>`}
      <${Alert} message=${error} />
      <${Notice} message=${notice} />
      ${removing ? this.confirmRemove(removing) : null}
      ${members ? table() : error ? null : html`<p class="muted">Loading members…</p>`}
    </section>`;
  }
}
