import { sql, type Kysely } from 'kysely';

/**
 * Photos (and other files) trackers send, kept in the database beside the event that announces them
 * (docs/api/media.md): any API process on any machine can serve them, they are backed up and retained
 * with the rest of the data, and a picture and its `vehicle.media` event commit together.
 * The account and mode are the device's. `command_id` is the take_photo command the picture answers,
 * if any. A device's picture is stored once however often it is sent (unique on its SHA-256).
 * The engine deletes rows older than MEDIA_RETENTION_DAYS.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE media (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      taken_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      content_type text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png')),
      size integer NOT NULL CHECK (size > 0),
      file_name text NOT NULL CHECK (length(file_name) BETWEEN 1 AND 255),
      sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      protocol text NOT NULL,
      command_id bigint REFERENCES commands (id) ON DELETE SET NULL,
      bytes bytea NOT NULL,
      CHECK (octet_length(bytes) = size),
      -- The same picture sent again (a transfer restarted after a lost answer) is the same row.
      UNIQUE (device_id, sha256)
    )
  `.execute(db);
  // The list reads one vehicle's media by time; retention deletes by time.
  await sql`CREATE INDEX media_device_taken ON media (device_id, taken_at, id)`.execute(db);
  await sql`CREATE INDEX media_received ON media (received_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS media`.execute(db);
}
