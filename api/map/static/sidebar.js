// The sidebar's panels other than events: problems, the vehicle list, the selected vehicle and travels.

import { element } from './element.js';
import { statusClass } from './fleet-map.js';

/** Failures shown until their source succeeds again, one line per source (status, geofences, ...). */
export function problemBanner(banner) {
  const current = new Map();
  const render = () => {
    banner.replaceChildren(...[...current.values()].map((message) => element('span', '', message)));
    banner.hidden = current.size === 0;
  };
  return {
    show(source, message) {
      current.set(source, message);
      render();
    },
    clear(source) {
      if (current.delete(source)) render();
    },
    clearAll() {
      current.clear();
      render();
    },
  };
}

const speedText = (v) => (v.speedKmh === null ? '' : `${v.speedKmh} km/h`);

/** One row per vehicle, in the status endpoint's order (by name), coloured by status. */
export function vehicleList(list, { onSelect }) {
  list.addEventListener('click', (clicked) => {
    const row = clicked.target.closest('li[data-device-id]');
    if (row) onSelect(row.dataset.deviceId);
  });
  return {
    show(vehicles, selectedId) {
      list.replaceChildren(
        ...vehicles.map((v) => {
          const row = element('li', `vehicle ${statusClass(v.status)}${v.deviceId === selectedId ? ' selected' : ''}`);
          row.dataset.deviceId = v.deviceId;
          row.dataset.status = v.status;
          row.tabIndex = 0;
          row.append(
            element('span', 'vehicle-dot'),
            element('span', 'vehicle-name', v.name),
            element('span', 'vehicle-plates', v.plates),
            element('span', 'status', v.status),
            element('span', 'vehicle-speed', v.latitude === null ? 'no position yet' : speedText(v)),
          );
          return row;
        }),
      );
    },
  };
}

const since = (iso) => {
  if (!iso) return 'never';
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  const ago = seconds < 90 ? `${seconds} s ago` : seconds < 5400 ? `${Math.round(seconds / 60)} min ago` : `${Math.round(seconds / 3600)} h ago`;
  return `${new Date(iso).toLocaleTimeString()} (${ago})`;
};

/** The selected vehicle: its status in detail, its trail and its travel. */
export function vehicleDetails(section) {
  const title = section.querySelector('h2');
  const list = section.querySelector('dl');
  return {
    show(v, trailPoints, travel) {
      section.hidden = false;
      title.textContent = `${v.name} · ${v.plates}`;
      const rows = [
        ['Status', v.status],
        ['Engine', v.engineStatus],
        ['Speed', speedText(v) || '—'],
        ['Heading', v.heading === null ? '—' : `${v.heading}°`],
        ['Position', v.latitude === null ? 'no position yet' : `${v.latitude.toFixed(5)}, ${v.longitude.toFixed(5)}`],
        ['Last report', since(v.lastReportUtc)],
        ['Satellites', v.satellites ?? '—'],
        ['Odometer', v.odometerKm === null ? '—' : `${v.odometerKm} km`],
        ['Trail', `${trailPoints} points over the last hour`],
        ['Travel', travel ? `${travel.travelId}: ${travel.status}, ${travel.completedWaypoints}/${travel.totalWaypoints} waypoints` : 'none'],
      ];
      list.replaceChildren(...rows.flatMap(([term, value]) => [element('dt', '', term), element('dd', '', String(value))]));
    },
    hide() {
      section.hidden = true;
      list.replaceChildren();
    },
  };
}

/** A waypoint's times in words: expected, then arrived or the live ETA, with the timing label. */
export function waypointTimes(w) {
  const actual = w.arrivedAt ? `arrived ${w.arrivedAt.local}` : w.estimatedArrival ? `ETA ${w.estimatedArrival.local}` : 'no ETA yet';
  return `expected ${w.expectedArrival.local}, ${actual}${w.timing ? ` (${w.timing})` : ''}`;
}

/** Active travels with each waypoint's status, expected time and ETA (in the key's user's timezone). */
export function travelList(list) {
  return {
    show(travels, total) {
      if (total === 0) {
        list.replaceChildren(element('li', 'empty', 'No active travels'));
        return;
      }
      const items = travels.map((t) => {
        const item = element('li', 'travel');
        item.dataset.travelId = t.travelId;
        const head = element('div', 'travel-head');
        head.append(element('strong', '', `${t.vehicle} · travel ${t.travelId}`), element('span', 'travel-status', `${t.status}, ${t.progress}%`));
        const waypoints = element('ol', 'waypoints');
        for (const w of t.waypoints) {
          const row = element('li', `waypoint waypoint-${w.status.toLowerCase()}`);
          row.append(element('span', 'waypoint-name', `${w.order}. ${w.geofence}`), element('span', 'waypoint-times', w.order === 1 ? `start ${t.startTime.local}` : waypointTimes(w)));
          waypoints.append(row);
        }
        item.append(head, waypoints, element('small', 'timezone', `times in ${t.timezone}`));
        return item;
      });
      if (total > travels.length) items.push(element('li', 'empty', `${total - travels.length} more not shown in detail`));
      list.replaceChildren(...items);
    },
    clear() {
      list.replaceChildren();
    },
  };
}
