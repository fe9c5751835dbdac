/**
 * What a person receives: the same message in each channel's form. Email takes the subject, the
 * text and HTML versions and any attachments; Telegram, SMS and web push take the short form (and
 * the link, where they can carry one).
 */
export interface NotificationMessage {
  subject: string;
  text: string;
  html: string;
  /** One or two lines: an SMS, a Telegram message, a push notification's body. */
  short: string;
  /** Where to look: the vehicle on the map. */
  url?: string;
  attachments?: Array<{ filename: string; content: string; contentType: string }>;
}

/** The logged event a message tells of, as its payload carries it. */
export interface NotifiedEvent {
  type: string;
  /** When it happened. */
  occurredAt: Date;
  data: Record<string, unknown>;
}

export interface MessageOptions {
  /** The recipient's IANA timezone: the time is shown in it. */
  timezone: string;
  /** The server's public address (PUBLIC_URL): with it, the message links to the vehicle in the console. */
  publicUrl?: string;
}

type Data = Record<string, unknown>;
const obj = (v: unknown): Data => (v && typeof v === 'object' ? (v as Data) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : undefined);

/** What happened, as a phrase after the vehicle's name ("entered Depot North"). */
export function eventPhrase(type: string, data: Data): string {
  const geofence = str(obj(data.geofence).name) ?? 'a geofence';
  const travel = obj(data.travel);
  const waypoint = obj(data.waypoint);
  const command = obj(data.command);
  const fuel = obj(data.fuel);
  const maintenance = obj(data.maintenance);
  switch (type) {
    case 'vehicle.geofence.enter': return `entered ${geofence}`;
    case 'vehicle.geofence.exit': return `left ${geofence}`;
    case 'vehicle.status.changed': return `is now ${str(data.to) ?? 'in a new status'}${data.from ? ` (was ${str(data.from)})` : ''}`;
    case 'vehicle.ignition.on': return 'ignition on';
    case 'vehicle.ignition.off': return 'ignition off';
    case 'vehicle.overspeed': return `speeding at ${str(data.speedKmh) ?? '?'} km/h${data.limitKmh ? ` (limit ${str(data.limitKmh)} km/h)` : ''}`;
    case 'vehicle.alarm': return `raised an alarm: ${str(data.alarm) ?? 'unknown'}`;
    case 'vehicle.panic': return 'PANIC: the SOS button was pressed';
    case 'vehicle.maintenance.due': return `maintenance due: ${str(maintenance.name) ?? 'an item'}`;
    case 'vehicle.maintenance.overdue': return `maintenance overdue: ${str(maintenance.name) ?? 'an item'}`;
    case 'vehicle.harsh.acceleration': return 'harsh acceleration';
    case 'vehicle.harsh.braking': return 'harsh braking';
    case 'vehicle.harsh.cornering': return 'harsh cornering';
    case 'vehicle.idle.start': return 'started idling';
    case 'vehicle.idle.end': return `stopped idling${typeof data.idleSeconds === 'number' ? ` after ${Math.round(data.idleSeconds / 60)} min` : ''}`;
    case 'vehicle.fuel.refill': return `refuelled${fuel.amountLitres ? ` ${str(fuel.amountLitres)} L` : fuel.amountPercent ? ` ${str(fuel.amountPercent)} %` : ''}`;
    case 'vehicle.fuel.drop': return `fuel dropped${fuel.amountLitres ? ` ${str(fuel.amountLitres)} L` : fuel.amountPercent ? ` ${str(fuel.amountPercent)} %` : ''} while parked`;
    case 'vehicle.media': return 'sent a photo';
    case 'device.online': return 'tracker connected';
    case 'device.offline': return `tracker disconnected${data.reason ? ` (${str(data.reason)})` : ''}`;
    case 'driver.changed': return data.driver ? `driver is now ${str(obj(data.driver).name) ?? 'unknown'}` : 'driver unassigned';
    case 'travel.started': return `travel ${str(travel.id) ?? ''} started`.replace('  ', ' ');
    case 'travel.waypoint.arrived': return `arrived at ${str(waypoint.geofence) ?? 'a waypoint'} (travel ${str(travel.id) ?? '?'})`;
    case 'travel.completed': return `travel ${str(travel.id) ?? '?'} completed`;
    case 'travel.cancelled': return `travel ${str(travel.id) ?? '?'} cancelled`;
    case 'travel.delayed': return `running ${str(waypoint.delayMinutes) ?? '?'} min late for ${str(waypoint.geofence) ?? 'a waypoint'} (travel ${str(travel.id) ?? '?'})`;
    case 'command.sent': case 'command.acknowledged': case 'command.failed': case 'command.expired': case 'command.cancelled':
      return `command ${str(command.type) ?? ''} ${type.slice('command.'.length)}${command.error ? `: ${str(command.error)}` : ''}`.replace('  ', ' ');
    default: return type;
  }
}

/** Text made safe inside HTML (an element's content or a quoted attribute). */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `dd/MM/yyyy HH:mm ZONE`; a formatter per timezone, made once (making one costs more than using it). */
function localTime(at: Date, timeZone: string): string {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short',
    });
    if (formatters.size >= 1_000) formatters.clear();
    formatters.set(timeZone, formatter);
  }
  const parts = formatter.formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('day')}/${part('month')}/${part('year')} ${part('hour')}:${part('minute')} ${part('timeZoneName')}`;
}

/**
 * The message about one event: the vehicle, what happened, when (in the recipient's timezone), where
 * (the address when known, else the coordinates), and a link to the vehicle in the console when the
 * server knows its public address. Every value from the event is escaped in the HTML.
 */
export function eventMessage(event: NotifiedEvent, options: MessageOptions): NotificationMessage {
  const vehicle = obj(event.data.vehicle);
  const position = obj(event.data.position);
  const who = str(vehicle.name) ?? str(vehicle.id) ?? 'Fleet';
  const what = eventPhrase(event.type, event.data);
  const when = localTime(event.occurredAt, options.timezone);
  const coordinates = typeof position.lat === 'number' && typeof position.lng === 'number' ? `${position.lat}, ${position.lng}` : undefined;
  const where = str(position.address) ?? coordinates;
  const url = options.publicUrl && vehicle.id !== undefined ? `${options.publicUrl}/console#/vehicles/${encodeURIComponent(String(vehicle.id))}` : undefined;
  const subject = `${who}: ${what}`;
  const plates = str(vehicle.plates);
  const lines: Array<[string, string]> = [
    ['Vehicle', plates ? `${who} (${plates})` : who],
    ['What', what],
    ['When', when],
    ...(where ? [['Where', where] as [string, string]] : []),
    ...(str(position.speedKmh) !== undefined ? [['Speed', `${str(position.speedKmh)} km/h`] as [string, string]] : []),
  ];
  const text = [...lines.map(([k, v]) => `${k}: ${v}`), ...(url ? ['', `Open: ${url}`] : []), '', `Event: ${event.type}`].join('\n');
  const html = [
    `<p><strong>${escapeHtml(who)}</strong> ${escapeHtml(what)}</p>`,
    '<table>',
    ...lines.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`),
    '</table>',
    ...(url ? [`<p><a href="${escapeHtml(url)}">Open in the console</a></p>`] : []),
    `<p style="color:#666">Event: ${escapeHtml(event.type)}</p>`,
  ].join('\n');
  const short = `${subject}, ${when}${where ? `, ${where}` : ''}`;
  return { subject, text, html, short, ...(url ? { url } : {}) };
}
