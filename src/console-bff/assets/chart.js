// The dashboard's chart, drawn by the page as SVG: elements and attributes only (colours come from
// classes in console.css), so it needs nothing beyond the strict CSP's `style-src 'self'`. The
// SVG is as wide as its box in CSS pixels, so its text stays 12 px on a 390 px phone.
import { html, Component } from './ui.js';

export const SERIES = [
  { key: 'guests_created', label: 'Guests created', className: 'guests' },
  { key: 'upgrades', label: 'Upgrades', className: 'upgrades' },
  { key: 'sign_ins', label: 'Sign-ins', className: 'sign-ins' },
];

const HEIGHT = 220;
// The right margin holds half of today's date label, centred on the last point.
const MARGIN = { top: 12, right: 24, bottom: 26, left: 40 };

/** A round upper bound and its tick step: 0, 5, 10 … or 0, 20, 40 … */
export function niceScale(max) {
  if (max <= 4) return { top: 4, step: 1 };
  const rough = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough);
  return { top: Math.ceil(max / step) * step, step };
}

/** `2026-11-24` → `Nov 24`, read as a calendar date (no time zone shift). */
function shortDate(date) {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d)).toLocaleDateString('en-US', {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

function plot(days, width) {
  const innerW = Math.max(width - MARGIN.left - MARGIN.right, 10);
  const innerH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const max = Math.max(0, ...days.flatMap((d) => SERIES.map((s) => d[s.key])));
  const { top, step } = niceScale(max);
  const x = (i) => MARGIN.left + (days.length === 1 ? innerW / 2 : (i * innerW) / (days.length - 1));
  const y = (v) => MARGIN.top + innerH - (v / top) * innerH;
  const ticks = [];
  for (let v = 0; v <= top; v += step) ticks.push(v);
  // One date label per ~64 px, always including the last (today).
  const every = Math.max(1, Math.ceil(days.length / Math.max(1, Math.floor(innerW / 64))));
  const labelled = days.map((_, i) => (days.length - 1 - i) % every === 0);
  return { x, y, ticks, labelled };
}

/** Guests created, upgrades and sign-ins per day: `days` as in `GET …/stats`. */
export class DailyChart extends Component {
  state = { width: 0 };

  componentDidMount() {
    this.observer = new ResizeObserver(([entry]) => {
      const width = Math.floor(entry.contentRect.width);
      if (width !== this.state.width) this.setState({ width });
    });
    this.observer.observe(this.box);
  }

  componentWillUnmount() {
    this.observer.disconnect();
  }

  render({ days }, { width }) {
    return html`<figure class="chart">
      <div class="chart-box" ref=${(el) => (this.box = el)}>${width > 0 ? this.svg(days, width) : null}</div>
      <figcaption>
        <ul class="legend">
          ${SERIES.map(
            (s) => html`<li><span class=${`swatch ${s.className}`} aria-hidden="true"></span>${s.label}</li>`,
          )}
        </ul>
      </figcaption>
    </figure>`;
  }

  svg(days, width) {
    const { x, y, ticks, labelled } = plot(days, width);
    const first = days[0] ? days[0].date : '';
    const last = days.length ? days[days.length - 1].date : '';
    return html`<svg
      width=${width}
      height=${HEIGHT}
      viewBox=${`0 0 ${width} ${HEIGHT}`}
      role="img"
      aria-labelledby="chart-title"
    >
      <title id="chart-title">Guests created, upgrades and sign-ins per day, ${first} to ${last}</title>
      ${ticks.map(
        (v) =>
          html`<g class="grid">
            <line x1=${MARGIN.left} x2=${width - MARGIN.right} y1=${y(v)} y2=${y(v)} />
            <text x=${MARGIN.left - 6} y=${y(v) + 4} text-anchor="end">${v}</text>
          </g>`,
      )}
      ${days.map((d, i) =>
        labelled[i]
          ? html`<text class="axis" x=${x(i)} y=${HEIGHT - 8} text-anchor="middle">${shortDate(d.date)}</text>`
          : null,
      )}
      ${SERIES.map(
        (s) =>
          html`<g class=${`series ${s.className}`}>
            <polyline points=${days.map((d, i) => `${x(i).toFixed(1)},${y(d[s.key]).toFixed(1)}`).join(' ')} />
            ${days.map(
              (d, i) =>
                html`<circle cx=${x(i)} cy=${y(d[s.key])} r="3">
                  <title>${s.label}, ${d.date}: ${d[s.key]}</title>
                </circle>`,
            )}
          </g>`,
      )}
    </svg>`;
  }
}
