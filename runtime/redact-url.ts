/** A connection string with its password replaced, safe to print. */
export function redactUrl(raw: string): string {
  try {
    const parsed = new URL(raw);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<invalid url>';
  }
}
