// What the map knows of the fleet: each vehicle's status, the geofences and the travels, as the API
// last gave them and live events moved them since. No drawing here; the session draws from it.

import { waypointTimes } from './sidebar.js';

export function fleetState() {
  /** deviceId → the device's status, as the status endpoint gave it and live events moved it since. */
  const vehicles = new Map();
  let geofencesByName = new Map();
  let travels = [];

  const byName = (name) => [...vehicles.values()].find((v) => v.name === name);

  return {
    vehicles: () => [...vehicles.values()],
    vehicle: (deviceId) => vehicles.get(deviceId),
    travels: () => travels,

    setStatus(list) {
      vehicles.clear();
      for (const v of list) vehicles.set(v.deviceId, v);
    },
    setGeofences(list) {
      geofencesByName = new Map(list.map((g) => [g.name, g]));
    },
    setTravels(list) {
      travels = list;
    },

    travelOf: (vehicle) => travels.find((t) => t.vehicle === vehicle.name),

    /** What is left of each travel to drive, and its waypoints on their geofences' centres. */
    travelRoutes() {
      return travels.map((travel) => {
        const vehicle = byName(travel.vehicle);
        const waypoints = [];
        for (const w of travel.waypoints) {
          const geofence = geofencesByName.get(w.geofence);
          if (!geofence) continue; // waypoint 1 is the vehicle's own position at the start
          waypoints.push({ order: w.order, status: w.status, lat: geofence.centerLat, lng: geofence.centerLng, label: `${travel.vehicle}, ${w.order}. ${w.geofence}: ${waypointTimes(w)}` });
        }
        const pending = waypoints.filter((w) => w.status === 'Pending').map((w) => [w.lat, w.lng]);
        const from = vehicle && vehicle.latitude !== null ? [[vehicle.latitude, vehicle.longitude]] : [];
        return { line: [...from, ...pending], waypoints };
      });
    },

    /**
     * A live event moves its vehicle (when its fix is newer than what is shown) and changes its
     * status. Says what the event makes stale: the travels (a travel event), the geofences (one not
     * known yet).
     */
    apply(event) {
      const d = event.data ?? {};
      const stale = {
        travels: event.type.startsWith('travel.'),
        geofences: Boolean(d.geofence) && ![...geofencesByName.values()].some((g) => g.id === d.geofence.id),
      };
      const vehicle = d.vehicle && vehicles.get(d.vehicle.imei);
      if (!vehicle) return stale;
      const p = d.position;
      if (p && (!vehicle.lastReportUtc || Date.parse(p.fixTime) >= Date.parse(vehicle.lastReportUtc))) {
        Object.assign(vehicle, { latitude: p.lat, longitude: p.lng, speedKmh: p.speedKmh, heading: p.heading, lastReportUtc: p.fixTime });
      }
      if (event.type === 'vehicle.status.changed') vehicle.status = d.to;
      if (event.type === 'vehicle.ignition.on') vehicle.engineStatus = 'On';
      if (event.type === 'vehicle.ignition.off') vehicle.engineStatus = 'Off';
      return stale;
    },
  };
}
