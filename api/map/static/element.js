// Elements are built with text content, never from HTML strings: names and messages come from the
// fleet's data, and the Content-Security-Policy forbids the inline styles such strings could carry.

/** A `tag` element with a class and text (both optional). */
export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
