// The permissions of a new key or OAuth client, as checkboxes: `*` (every permission but the named-only
// ones) and each permission of the catalog with what it allows. The session's role bounds what can be
// granted; the API refuses more and says what, so what the role lacks is marked, not hidden.
import { PERMISSION_CATALOG } from './catalogs.js';
import { h } from './dom.js';

let pickers = 0;

/** `{ node, chosen() → names, reset() }`; `can` is the session's rule. */
export function permissionPicker(legend, can) {
  const id = `perm-${++pickers}`;
  const star = h('input', { type: 'checkbox', id: `${id}-all`, value: '*' });
  const boxes = PERMISSION_CATALOG.map((p) => {
    const box = h('input', { type: 'checkbox', id: `${id}-${p.name}`, value: p.name, 'aria-describedby': `${id}-${p.name}-hint` });
    const notes = [p.namedOnly ? h('span', { class: 'badge' }, 'named only') : null, can(p.name) ? null : h('span', { class: 'badge bad' }, 'not in your role')];
    const item = h('div', { class: 'check' },
      box, ' ', h('label', { for: box.id }, h('code', {}, p.name)), ' ', ...notes.filter(Boolean),
      h('small', { id: `${id}-${p.name}-hint`, class: 'hint' }, p.description));
    return { box, permission: p, item };
  });
  const follow = () => {
    // `*` covers every permission but the named-only ones: their boxes say so while it is ticked.
    for (const { box, permission } of boxes) {
      if (permission.namedOnly) continue;
      box.disabled = star.checked;
      if (star.checked) box.checked = true;
    }
  };
  star.addEventListener('change', () => {
    if (!star.checked) for (const { box, permission } of boxes) if (!permission.namedOnly) box.checked = false;
    follow();
  });
  const node = h('fieldset', { class: 'permissions' },
    h('legend', {}, legend),
    h('div', { class: 'check all' }, star, ' ', h('label', { for: star.id }, h('code', {}, '*'), ' every permission except the named-only ones')),
    h('div', { class: 'checks' }, boxes.map((b) => b.item)));
  return {
    node,
    chosen() {
      if (star.checked) return ['*', ...boxes.filter((b) => b.permission.namedOnly && b.box.checked).map((b) => b.permission.name)];
      return boxes.filter((b) => b.box.checked).map((b) => b.permission.name);
    },
    reset() {
      star.checked = false;
      for (const { box } of boxes) { box.checked = false; box.disabled = false; }
    },
  };
}

/** A permission list as a line of code names. */
export const permissionList = (names) => h('span', { class: 'codes' }, names.map((n) => h('code', {}, n)));
