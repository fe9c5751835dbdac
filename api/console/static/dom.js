// Building blocks of the console's views. Elements are built with text content, never from HTML
// strings: names and messages come from the fleet's data, and the Content-Security-Policy forbids the
// inline styles and scripts such strings could carry.

/**
 * An element: `h('button', { type: 'button', onclick }, 'Save')`. Attributes starting with `on` are
 * listeners; `class`, `hidden`, `disabled`, `checked`, `value` set the property; children are nodes or
 * text (null and false are skipped).
 */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else if (name === 'class') node.className = value;
    else if (['hidden', 'disabled', 'checked', 'value', 'selected', 'required', 'multiple'].includes(name)) node[name] = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

let fieldCount = 0;

/** A labelled form field: the label is tied to the control, so screen readers and clicks find it. */
export function field(label, control, hint) {
  const id = control.id || `field-${++fieldCount}`;
  control.id = id;
  const hintNode = hint ? h('small', { id: `${id}-hint`, class: 'hint' }, hint) : null;
  if (hintNode) control.setAttribute('aria-describedby', hintNode.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintNode);
}

/** A table with a caption, column headers and one row per item; `empty` when there are none. */
export function table(caption, columns, rows, empty = 'None yet.') {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h('div', { class: 'table-wrap' },
    h('table', {},
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c.label)))),
      h('tbody', {}, rows.map((row) => h('tr', {}, columns.map((c) => h('td', { 'data-label': c.label }, c.cell(row))))))));
}

/** A place for a form's error, read out when it appears. */
export function errorLine() {
  const node = h('p', { class: 'error', role: 'alert', hidden: true });
  return {
    node,
    show(message) { node.textContent = message; node.hidden = false; },
    clear() { node.textContent = ''; node.hidden = true; },
  };
}

/** Shows a short message at the foot of the page for a few seconds (announced politely). */
export function notify(message) {
  const notice = document.getElementById('notice');
  notice.textContent = message;
  notice.hidden = false;
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => { notice.hidden = true; }, 5000);
}

/**
 * Asks a yes/no question in a modal dialog (keyboard: Tab between the buttons, Escape cancels) and
 * resolves true only when `confirmLabel` is chosen. `body` is text or nodes.
 */
export function confirmDialog({ title, body, confirmLabel, danger = false }) {
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', value: 'cancel' }, 'Cancel');
    const confirm = h('button', { type: 'button', class: danger ? 'danger' : 'primary', value: 'confirm' }, confirmLabel);
    const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'dialog-title' },
      h('h2', { id: 'dialog-title' }, title),
      h('div', { class: 'dialog-body' }, body),
      h('div', { class: 'actions' }, cancel, confirm));
    const close = (answer) => { dialog.close(); dialog.remove(); resolve(answer); };
    cancel.addEventListener('click', () => close(false));
    confirm.addEventListener('click', () => close(true));
    dialog.addEventListener('cancel', (event) => { event.preventDefault(); close(false); });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/** A date-time as the reader's locale writes it, or a dash. */
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

/** A secret shown once, with a button to copy it. */
export function secretBox(label, secret) {
  const input = h('input', { type: 'text', readonly: true, value: secret, class: 'secret', spellcheck: 'false' });
  const copy = h('button', { type: 'button', onclick: async () => {
    input.select();
    try { await navigator.clipboard.writeText(secret); notify('Copied'); } catch { document.execCommand?.('copy'); }
  } }, 'Copy');
  return h('div', { class: 'secret-box', role: 'status' },
    h('p', {}, h('strong', {}, label), ' It is shown only this once: copy it now.'),
    field('Secret', input), copy);
}
