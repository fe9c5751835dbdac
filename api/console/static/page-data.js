// What the console's HTML hands its scripts in `data-` attributes of its body: lists the API
// defines (tracker protocols, command types), so the forms offer exactly what the API takes.

/** A comma-separated list the page holds in `data-<name>` (`protocols` → data-protocols). */
export const listFromPage = (name) => (document.body.dataset[name] ?? '').split(',').filter(Boolean);
