import type pg from 'pg';

export interface NotificationListener {
  /** Settles once the first attempt to listen has succeeded or failed. */
  ready: Promise<void>;
  close(): void;
}

/**
 * LISTENs on a channel over a connection of its own, and calls `onNotify` for each notification.
 * A lost connection is replaced after a second; the caller's poll covers the gap, so a notification
 * only ever makes things faster, never correct.
 */
export function listenForNotifications(pool: pg.Pool, channel: string, onNotify: () => void): NotificationListener {
  let closed = false;
  let current: { client: pg.PoolClient; release(): void } | undefined;
  let retry: NodeJS.Timeout | undefined;

  const again = () => {
    if (!closed) (retry = setTimeout(() => void connect(), 1_000)).unref();
  };

  async function connect(): Promise<void> {
    try {
      const client = await pool.connect();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        client.removeAllListeners('notification');
        client.release(true); // a LISTENing session is not handed to anyone else
      };
      client.on('notification', () => onNotify());
      client.on('error', () => {
        if (current?.client === client) current = undefined;
        release();
        again();
      });
      await client.query(`LISTEN ${channel}`);
      if (closed) release();
      else current = { client, release };
    } catch {
      again();
    }
  }

  return {
    ready: connect(),
    close() {
      closed = true;
      clearTimeout(retry);
      current?.release();
      current = undefined;
    },
  };
}
