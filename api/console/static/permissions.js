// Whether a session's permissions cover one, by the API's rule: `*` covers every permission except
// those granted only by name (handed over by the page in data-named-only).

const namedOnly = new Set((document.body.dataset.namedOnly ?? '').split(',').filter(Boolean));

export function covers(held, needed) {
  if (held.includes(needed)) return true;
  return held.includes('*') && !namedOnly.has(needed);
}
