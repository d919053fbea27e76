// The audit trail, newest first, 50 a page: a type filter and "older events" paging by next_before.
import { api, describeError, tenantPath } from './api.js';
import { Alert, Component, Table, html, keep, keepFocus, when } from './ui.js';

function query(type, before) {
  const params = new URLSearchParams();
  if (type) params.set('type', type);
  if (before) params.set('before', before);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export class AuditView extends Component {
  state = { type: '', applied: '', events: null, next: null, error: null, busy: false };

  componentDidMount() {
    this.load('', null);
  }

  load(type, before) {
    const back = keepFocus();
    this.setState({ busy: true, error: null });
    api(tenantPath(this.props.tenant.id, `/audit${query(type, before)}`))
      .then(
        (body) =>
          this.setState({
            applied: type,
            events: before ? [...this.state.events, ...body.events] : body.events,
            next: body.next_before,
          }),
        (err) => this.setState({ error: describeError(err) }),
      )
      .finally(() => this.setState({ busy: false }, back));
  }

  filter = (e) => {
    e.preventDefault();
    this.load(this.state.type.trim(), null);
  };

  render(_, { type, applied, events, next, error, busy }) {
    return html`<section aria-labelledby="audit-title">
      <h3 id="audit-title">Audit trail</h3>
      <form class="search" onSubmit=${this.filter}>
        <label for="audit-type"
          >Event type <span class="hint">(exact, e.g. console.client.update; empty for all)</span></label
        >
        <div class="inline">
          <input id="audit-type" value=${type} onInput=${keep(this, 'type')} />
          <button type="submit" disabled=${busy}>Filter</button>
        </div>
      </form>
      <${Alert} message=${error} />
      ${
        events === null
          ? error
            ? null
            : html`<p class="muted">Loading events…</p>`
          : events.length === 0
            ? html`<p class="muted">${applied ? `No ${applied} events.` : 'No events yet.'}</p>`
            : html`<${Table}
                labels=${['Time', 'Type', 'Subject', 'Details']}
                rows=${events.map((ev) => ({
                  key: ev.id,
                  className: 'event',
                  cells: [
                    when(ev.created_at),
                    html`<code>${ev.type}</code>`,
                    ev.subject ? html`<code>${ev.subject}</code>` : '—',
                    ev.data && Object.keys(ev.data).length
                      ? html`<code class="data">${JSON.stringify(ev.data)}</code>`
                      : '—',
                  ],
                }))}
              />`
      }
      ${
        next
          ? html`<button type="button" class="secondary" disabled=${busy} onClick=${() => this.load(applied, next)}>
              Older events
            </button>`
          : null
      }
    </section>`;
  }
}
