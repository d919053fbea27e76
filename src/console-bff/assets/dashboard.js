// Dashboard: the last 30 days of the tenant in a chart, with totals and the numbers as a table.
import { api, describeError, tenantPath } from './api.js';
import { DailyChart, SERIES } from './chart.js';
import { Alert, Component, Table, html } from './ui.js';

export class DashboardView extends Component {
  state = { days: null, error: null };

  componentDidMount() {
    api(tenantPath(this.props.tenant.id, '/stats?days=30')).then(
      (body) => this.setState({ days: body.days }),
      (err) => this.setState({ error: describeError(err) }),
    );
  }

  render(_, { days, error }) {
    if (error) return html`<${Alert} message=${`The numbers could not be loaded: ${error}`} />`;
    if (!days) return html`<p class="muted">Loading the last 30 days…</p>`;
    const total = (key) => days.reduce((sum, d) => sum + d[key], 0);
    return html`<section aria-labelledby="dashboard-title">
      <h3 id="dashboard-title">Last 30 days</h3>
      <ul class="totals">
        ${SERIES.map(
          (s) =>
            html`<li class=${s.className}>
              <span class="total-number">${total(s.key)}</span>
              <span class="total-label">${s.label}</span>
            </li>`,
        )}
      </ul>
      <${DailyChart} days=${days} />
      <details>
        <summary>The numbers per day</summary>
        <${Table}
          labels=${['Date', ...SERIES.map((s) => s.label)]}
          rows=${[...days].reverse().map((d) => ({ key: d.date, cells: [d.date, ...SERIES.map((s) => d[s.key])] }))}
        />
      </details>
    </section>`;
  }
}
