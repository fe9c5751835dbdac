// The live map inside the console: the /map page in a frame. It is of this origin, so it opens by the
// same session cookie, with no key to paste.
import { h } from './dom.js';

export function render(main) {
  main.append(h('iframe', { class: 'map-frame', src: '/map', title: 'Live map of the fleet' }));
}
