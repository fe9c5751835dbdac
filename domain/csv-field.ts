/**
 * CSV as RFC 4180 writes it: fields holding a comma, quote, CR or LF quoted, with quotes doubled; CRLF
 * line ends. Text that people typed (vehicle, geofence and item names) is also kept from being read as
 * a formula by a spreadsheet: a cell starting with `=`, `+`, `-`, `@`, a tab or a CR gets a leading `'`
 * (OWASP's advice against CSV injection). Numbers are written as they are, so -12.5 stays a number.
 */

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A text cell, quoted as needed and never starting a formula. */
export function csvText(text: string): string {
  return csvField(FORMULA_START.test(text) ? `'${text}` : text);
}

export type CsvCell = string | number | boolean | null;

/** One CSV line: text through csvText, numbers and booleans as written, null as an empty field; CRLF-ended. */
export function csvRow(cells: readonly CsvCell[]): string {
  return `${cells.map((c) => (c === null ? '' : typeof c === 'string' ? csvText(c) : String(c))).join(',')}\r\n`;
}

/** A whole CSV file: the header row, then the rows. */
export function csvFile(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return csvRow(header) + rows.map(csvRow).join('');
}
