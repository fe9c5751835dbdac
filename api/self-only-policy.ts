/**
 * A Content-Security-Policy for the pages this server serves (the live map, the API reference):
 * scripts, styles, images and requests from this origin only, no base or form targets, never framed.
 * `extra` adds sources a page cannot do without (Swagger UI's inline styles and data: icons).
 */
export function selfOnlyPolicy(extra: { style?: string[]; img?: string[] } = {}): string {
  const self = (more: string[] = []) => ["'self'", ...more].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${self(extra.style)}`,
    `img-src ${self(extra.img)}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
