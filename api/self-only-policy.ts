/**
 * A Content-Security-Policy for the pages this server serves (the live map, the API reference):
 * scripts, styles, images and requests from this origin only, no base or form targets, never framed
 * (or framed only by this origin's pages, `framedBySelf`).
 * `extra` adds sources a page cannot do without (Swagger UI's inline styles and data: icons).
 */
export function selfOnlyPolicy(extra: { style?: string[]; img?: string[]; frames?: 'self'; framedBySelf?: boolean } = {}): string {
  const self = (more: string[] = []) => ["'self'", ...more].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${self(extra.style)}`,
    `img-src ${self(extra.img)}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    // The console shows the live map in a frame: the map may be framed by this origin's pages, and the console may frame them.
    ...(extra.frames ? ["frame-src 'self'"] : []),
    `frame-ancestors ${extra.framedBySelf ? "'self'" : "'none'"}`,
  ].join('; ');
}
