/**
 * The last guard before a value reaches a typed column: ingest range-checks what devices send, but a
 * row that still held NaN or an integer past int4 would fail its whole batch, so it becomes NULL here.
 */
export const finiteOrNull = (v: number | null | undefined): number | null => (v != null && Number.isFinite(v) ? v : null);

const INT4_MIN = -2_147_483_648;
const INT4_MAX = 2_147_483_647;

/** A whole number a PostgreSQL `integer` column holds, or NULL. */
export const int4OrNull = (v: number | null | undefined): number | null =>
  v != null && Number.isInteger(v) && v >= INT4_MIN && v <= INT4_MAX ? v : null;
