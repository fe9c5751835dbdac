// The event list in the sidebar, newest first, each event described in a few words.

import { element } from './element.js';

const MAX_SHOWN = 200;

const waypointText = (w) => (w ? `${w.geofence} (waypoint ${w.order})` : 'a waypoint');
const minutes = (n) => (n > 0 ? `+${n} min` : `${n} min`);

/** What happened, in words, after the vehicle's name. */
export function describeEvent(event) {
  const d = event.data ?? {};
  switch (event.type) {
    case 'vehicle.geofence.enter': return `entered ${d.geofence?.name}`;
    case 'vehicle.geofence.exit': return `left ${d.geofence?.name}`;
    // A vehicle's first status has no status before it (from is null).
    case 'vehicle.status.changed': return d.from == null ? `now ${d.to}` : `${d.from} → ${d.to}`;
    case 'vehicle.ignition.on': return 'ignition on';
    case 'vehicle.ignition.off': return 'ignition off';
    case 'vehicle.overspeed': return `${d.speedKmh} km/h, limit ${d.limitKmh} km/h`;
    case 'vehicle.alarm': return `alarm: ${d.alarm}`;
    case 'vehicle.panic': return 'PANIC (SOS)';
    case 'device.online': return `tracker online (${d.protocol})`;
    case 'device.offline': return `tracker offline: ${d.reason}`;
    case 'driver.changed': return d.driver ? `driver ${d.driver.name}` : 'driver unknown';
    case 'travel.started': return `travel ${d.travel?.id} started`;
    case 'travel.waypoint.arrived': return `travel ${d.travel?.id} arrived at ${waypointText(d.waypoint)}, ${minutes(d.waypoint?.delayMinutes ?? 0)}`;
    case 'travel.completed': return `travel ${d.travel?.id} completed`;
    case 'travel.cancelled': return `travel ${d.travel?.id} cancelled`;
    case 'travel.delayed': return `travel ${d.travel?.id} late at ${waypointText(d.waypoint)}, ${minutes(d.waypoint?.delayMinutes ?? 0)} (est.)`;
    case 'webhook.disabled': return `webhook ${d.webhook?.id} disabled: ${d.reason}`;
    default:
      if (event.type.startsWith('command.')) return `command ${d.command?.type} ${event.type.slice('command.'.length)}${d.command?.error ? `: ${d.command.error}` : ''}`;
      return event.type;
  }
}

/** The family an event belongs to, for its colour: geofence, status, alarm, travel, command, device. */
const familyOf = (type) => {
  if (type.startsWith('vehicle.geofence.')) return 'geofence';
  if (type === 'vehicle.alarm' || type === 'vehicle.panic' || type === 'vehicle.overspeed') return 'alarm';
  return type.split('.')[0] === 'vehicle' ? 'status' : type.split('.')[0];
};

export function eventList(list, { onEventClick }) {
  return {
    /** Adds events, given oldest first, at the top of the list. */
    add(events) {
      for (const event of events) {
        const item = element('li', `event event-${familyOf(event.type)}`);
        item.dataset.type = event.type;
        item.dataset.id = event.id;
        const time = element('time', '', new Date(event.timestamp).toLocaleTimeString());
        time.dateTime = event.timestamp;
        item.append(time, element('strong', '', event.data?.vehicle?.name ?? ''), element('span', '', describeEvent(event)));
        item.title = `${event.type} at ${event.timestamp}`;
        if (event.data?.position) {
          item.classList.add('locatable');
          item.addEventListener('click', () => onEventClick(event));
        }
        list.prepend(item);
      }
      while (list.children.length > MAX_SHOWN) list.lastElementChild.remove();
    },
    clear() {
      list.replaceChildren();
    },
  };
}
