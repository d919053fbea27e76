// Small shared pieces of the console page: the htm binding, roles, alerts and formatting.
import { h, Component } from './preact.mjs';
import htm from './htm.mjs';

export const html = htm.bind(h);
export { Component };

const RANK = { viewer: 0, developer: 1, admin: 2, owner: 3 };
const NEEDS = { readPlayers: 'developer', write: 'admin', members: 'owner' };

/**
 * What a role may do (contract section 15): viewers and developers read, developers also read
 * players, admins also change clients and players, owners also change members. The page only
 * hides what a role cannot do; the server refuses it with 403 all the same.
 */
export function can(role, what) {
  return (RANK[role] ?? -1) >= RANK[NEEDS[what]];
}

/** An error a person must notice, announced by screen readers as it appears. */
export function Alert({ message }) {
  return message ? html`<p class="alert" role="alert">${message}</p>` : null;
}

/** A confirmation that something worked, announced politely. */
export function Notice({ message }) {
  return message ? html`<p class="notice" role="status">${message}</p>` : null;
}

/** `2026-11-24T14:19:35.000Z` → `2026-11-24 14:19 UTC`: the same for every reader, sortable. */
export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** An input's handler keeping its value in `component`'s state under `key`. */
export function keep(component, key) {
  return (e) => component.setState({ [key]: e.currentTarget.value });
}

/** Lines of a textarea, trimmed, empty lines dropped. */
export function lines(text) {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** Words of a space-separated input. */
export function words(text) {
  return text.split(/\s+/).filter((w) => w !== '');
}

/** A table whose rows become label/value cards on a phone (`data-label` names each cell there). */
export function Table({ labels, rows }) {
  return html`<div class="table-box">
    <table class="cards">
      <thead>
        <tr>
          ${labels.map((l) => html`<th scope="col">${l}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (row) =>
            html`<tr key=${row.key} class=${row.className}>
              ${row.cells.map((cell, i) => html`<td data-label=${labels[i]}>${cell}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/**
 * Where focus is now, and a function that puts it back once the page has redrawn. Chromium drops
 * focus to the body when the focused button is disabled for a call or removed with its panel, and
 * a keyboard or screen-reader user would then start again from the top of the page. The place
 * goes back only if focus was lost meanwhile; if that button is gone, to the view's heading.
 */
export function keepFocus(within) {
  const place = document.activeElement;
  // `within`: an element of the view, for when the button that acted is already gone.
  const section = (place && place !== document.body ? place : within)?.closest('section');
  const heading = section && section.querySelector('h3');
  return () => {
    const lost = !document.activeElement || document.activeElement === document.body;
    if (!lost) return;
    const target = place && place !== document.body && place.isConnected && !place.disabled ? place : heading;
    if (!target || !target.isConnected) return;
    if (target === heading && !heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
    target.focus();
  };
}

/**
 * An inline confirmation that names what it acts on. `busy` disables both buttons while the
 * call runs, so a double click sends one request.
 */
export class Confirm extends Component {
  // Keyboard and screen-reader users land on the choice; Cancel is first so Enter does not erase.
  componentDidMount() {
    this.restore = keepFocus(this.cancel);
    this.cancel.focus();
  }

  // Back to the button that asked (or the view's heading when the change removed it), after the
  // redraw that removes this panel.
  componentWillUnmount() {
    queueMicrotask(this.restore);
  }

  // A refused change leaves the choice open: the person is put back on it, not on the body.
  componentDidUpdate(previous) {
    const lost = !document.activeElement || document.activeElement === document.body;
    if (previous.busy && !this.props.busy && lost) this.cancel.focus();
  }

  render({ id, question, detail, action, busy, onConfirm, onCancel }) {
    return html`<div class="confirm" role="alertdialog" aria-labelledby=${id} aria-describedby=${`${id}-detail`}>
      <p id=${id} class="confirm-question">${question}</p>
      <p id=${`${id}-detail`}>${detail}</p>
      <div class="actions">
        <button type="button" class="secondary" disabled=${busy} onClick=${onCancel} ref=${(el) => (this.cancel = el)}>
          Cancel
        </button>
        <button type="button" class="danger" disabled=${busy} onClick=${onConfirm}>${action}</button>
      </div>
    </div>`;
  }
}
