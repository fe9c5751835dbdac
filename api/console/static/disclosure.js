// A form kept folded under its title until wanted, so a page opens on its list.
import { h } from './dom.js';

/** `<details>` whose summary reads like a button; `close()` folds it again (after a form succeeded). */
export function disclosure(title, content) {
  const node = h('details', { class: 'disclosure' }, h('summary', {}, title), content);
  return { node, close: () => { node.open = false; } };
}
