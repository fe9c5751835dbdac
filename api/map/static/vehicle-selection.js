// The vehicle picked on the map or in the list: its trail for the last hour, loaded from the position
// history and extended by each newer position the session learns of.

import { TRAIL_MS, trailLoader } from './trail.js';

/**
 * `onChange` is called when the selection or its trail changes (the session redraws); `onTrailProblem`
 * with a failure to load a trail, or null once one loaded.
 */
export function vehicleSelection(api, { map, details, fleet, onChange, onTrailProblem, isStopped }) {
  const lastHour = trailLoader(api);
  /** `{deviceId, points: [{at, lat, lng}]}`, or undefined when no vehicle is selected. */
  let selected;

  /** Adds the selected vehicle's current position to its trail, and drops what is older than an hour. */
  function extendTrail() {
    const vehicle = selected && fleet.vehicle(selected.deviceId);
    if (!vehicle || vehicle.latitude === null || !vehicle.lastReportUtc) return;
    const at = Date.parse(vehicle.lastReportUtc);
    const last = selected.points[selected.points.length - 1];
    const moved = !last || last.lat !== vehicle.latitude || last.lng !== vehicle.longitude;
    if (moved && (!last || at > last.at)) selected.points.push({ at, lat: vehicle.latitude, lng: vehicle.longitude });
    const since = Date.now() - TRAIL_MS;
    while (selected.points.length > 0 && selected.points[0].at < since) selected.points.shift();
    map.showTrail(selected.points);
  }

  async function select(deviceId) {
    if (selected?.deviceId === deviceId) {
      // A second click on the selected vehicle puts it down.
      selected = undefined;
      map.select(undefined);
      map.showTrail([]);
      details.hide();
      onChange();
      return;
    }
    selected = { deviceId, points: [] };
    map.select(deviceId);
    map.showTrail([]);
    onChange();
    try {
      const points = await lastHour(deviceId);
      if (isStopped() || selected?.deviceId !== deviceId) return;
      selected.points = points;
      extendTrail();
      onChange();
      onTrailProblem(null);
    } catch (error) {
      if (!isStopped() && error.status !== 401) onTrailProblem(error);
    }
  }

  return {
    select,
    extendTrail,
    /** The selected vehicle's id, or undefined. */
    deviceId: () => selected?.deviceId,
    /** Fixes on the selected vehicle's trail. */
    trailLength: () => selected?.points.length ?? 0,
  };
}
