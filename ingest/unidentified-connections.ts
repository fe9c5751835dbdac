/** How long a new tracker connection has to say which device it is, by default (TRACKER_LOGIN_TIMEOUT_S). */
export const DEFAULT_LOGIN_TIMEOUT_MS = 30_000;
/** Unidentified connections one address holds by default: a carrier NAT puts many trackers behind one. */
export const DEFAULT_MAX_UNIDENTIFIED_PER_ADDRESS = 64;

/**
 * Connections that have not yet said which device they are, per remote address, over every tracker
 * port: one host cannot fill the listeners with sockets that never log in. A connection leaves the
 * count once it identifies (or closes), so a fleet behind one carrier address is only limited in how
 * many of its trackers may be logging in at the same moment.
 */
export class UnidentifiedConnections {
  private readonly held = new Map<string, number>();

  constructor(private readonly maxPerAddress = DEFAULT_MAX_UNIDENTIFIED_PER_ADDRESS) {}

  /** A place for a new connection from `address`, or false when that address holds its maximum. */
  take(address: string): boolean {
    const key = addressKey(address);
    const count = this.held.get(key) ?? 0;
    if (count >= this.maxPerAddress) return false;
    this.held.set(key, count + 1);
    return true;
  }

  release(address: string): void {
    const key = addressKey(address);
    const count = this.held.get(key) ?? 0;
    if (count <= 1) this.held.delete(key);
    else this.held.set(key, count - 1);
  }

  /** Unidentified connections `address` holds now. */
  count(address: string): number {
    return this.held.get(addressKey(address)) ?? 0;
  }
}

/**
 * Who an address belongs to: an IPv4 address (IPv4-mapped IPv6 included) as itself, an IPv6 address
 * by its /64, the network one host or one phone is given, so a host cannot step around the limit by
 * taking a new address of its own network for every connection.
 */
export function addressKey(address: string): string {
  const plain = address.replace(/%.*$/, '');
  if (!plain.includes(':')) return plain;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = plain.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${all.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}
