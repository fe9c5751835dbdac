// One logged-in session of the map: what is loaded, how often, and how live events update it.

import { apiClient } from './api-client.js';
import { eventList } from './event-list.js';
import { fleetMap } from './fleet-map.js';
import { liveEvents } from './live-events.js';
import { periodicTask } from './periodic-task.js';
import { problemBanner, travelList, vehicleDetails, vehicleList, waypointTimes } from './sidebar.js';
import { TRAIL_MS, trailLoader } from './trail.js';

// Trackers commonly report every 5 to 30 s (the demo's every 5 s); the status endpoint is in the
// detailed rate limit (50 requests per 10 s per key), which this leaves nearly all to other clients.
const STATUS_EVERY_MS = 5_000;
// The server refreshes ETAs about every 30 s; travel events bring a refresh forward.
const TRAVELS_EVERY_MS = 30_000;
const GEOFENCES_EVERY_MS = 60_000;
/** Travels read in full (one request each) on a refresh; the rest are only counted. */
const MAX_TRAVEL_DETAILS = 10;
const INITIAL_EVENTS = 50;
const SOURCE_NAMES = { status: 'Vehicle status', geofences: 'Geofences', travels: 'Travels', events: 'Events', trail: 'Trail' };

const byId = (id) => document.getElementById(id);

export function startSession(key, { onUnauthorized }) {
  let stopped = false;
  // Ending the session aborts its requests in flight, so no answer lands on the login box's page.
  const ending = new AbortController();
  const api = apiClient(key, ending.signal, (error) => {
    if (!stopped) onUnauthorized(error);
  });
  const problems = problemBanner(byId('problem'));
  const map = fleetMap(byId('map'), { onVehicleClick: select });
  const vehicles = vehicleList(byId('vehicle-list'), { onSelect: select });
  const details = vehicleDetails(byId('selected'));
  const travelPanel = travelList(byId('travel-list'));
  const events = eventList(byId('event-list'), { onEventClick: (e) => map.panTo(e.data.position.lat, e.data.position.lng) });
  const connection = byId('connection');
  const lastHour = trailLoader(api);

  /** deviceId → the device's status, as the status endpoint gave it and live events moved it since. */
  const fleet = new Map();
  let geofencesByName = new Map();
  let travels = [];
  /** The vehicle whose trail is shown: `{deviceId, points: [{at, lat, lng}]}`. */
  let selected;
  const loaded = { status: false, geofences: false };

  /** Runs a refresh, showing its failure in the sidebar until it succeeds again. */
  const reported = (source, refresh) => async () => {
    try {
      await refresh();
      problems.clear(source);
    } catch (error) {
      if (!stopped && error.status !== 401) problems.show(source, `${SOURCE_NAMES[source]}: ${error.message}`);
      throw error; // the periodic task backs off on a 429
    } finally {
      loaded[source] = true;
      // Framed once both first answers are in (or failed), so it covers geofences and vehicles.
      if (!stopped && loaded.status && loaded.geofences) map.fitOnce();
    }
  };

  const travelOf = (vehicle) => travels.find((t) => t.vehicle === vehicle.name);

  function render() {
    if (stopped) return;
    const list = [...fleet.values()];
    map.showVehicles(list);
    vehicles.show(list, selected?.deviceId);
    const vehicle = selected && fleet.get(selected.deviceId);
    if (vehicle) details.show(vehicle, selected.points.length, travelOf(vehicle));
    map.showTravels(travels.map(travelRoute));
  }

  /** What is left of a travel to drive, and its waypoints on their geofences' centres. */
  function travelRoute(travel) {
    const vehicle = [...fleet.values()].find((v) => v.name === travel.vehicle);
    const waypoints = [];
    for (const w of travel.waypoints) {
      const geofence = geofencesByName.get(w.geofence);
      if (!geofence) continue; // waypoint 1 is the vehicle's own position at the start
      waypoints.push({ order: w.order, status: w.status, lat: geofence.centerLat, lng: geofence.centerLng, label: `${travel.vehicle}, ${w.order}. ${w.geofence}: ${waypointTimes(w)}` });
    }
    const pending = waypoints.filter((w) => w.status === 'Pending').map((w) => [w.lat, w.lng]);
    const from = vehicle && vehicle.latitude !== null ? [[vehicle.latitude, vehicle.longitude]] : [];
    return { line: [...from, ...pending], waypoints };
  }

  function extendTrail() {
    const vehicle = selected && fleet.get(selected.deviceId);
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
      render();
      return;
    }
    selected = { deviceId, points: [] };
    map.select(deviceId);
    map.showTrail([]);
    render();
    try {
      const points = await lastHour(deviceId);
      if (stopped || selected?.deviceId !== deviceId) return;
      selected.points = points;
      extendTrail();
      render();
      problems.clear('trail');
    } catch (error) {
      if (!stopped && error.status !== 401) problems.show('trail', `${SOURCE_NAMES.trail}: ${error.message}`);
    }
  }

  const statusTask = periodicTask(STATUS_EVERY_MS, reported('status', async () => {
    const list = (await api.get('/devices/status')).data;
    if (stopped) return;
    fleet.clear();
    for (const v of list) fleet.set(v.deviceId, v);
    extendTrail();
    render();
  }));

  const geofenceTask = periodicTask(GEOFENCES_EVERY_MS, reported('geofences', async () => {
    const list = (await api.get('/geofences')).data;
    if (stopped) return;
    geofencesByName = new Map(list.map((g) => [g.name, g]));
    map.showGeofences(list);
    render();
  }));

  const travelTask = periodicTask(TRAVELS_EVERY_MS, reported('travels', async () => {
    const summaries = (await api.get('/travels')).data;
    const shown = summaries.slice(0, MAX_TRAVEL_DETAILS);
    const full = await Promise.all(shown.map(async (t) => (await api.get(`/travels/${t.travelId}`)).data));
    if (stopped) return;
    travels = full;
    travelPanel.show(travels, summaries.length);
    render();
  }));

  /** A live event moves its vehicle (when its fix is newer than what is shown) and changes its status. */
  function apply(event) {
    const d = event.data ?? {};
    if (event.type.startsWith('travel.')) travelTask.runNow();
    if (d.geofence && ![...geofencesByName.values()].some((g) => g.id === d.geofence.id)) geofenceTask.runNow();
    const vehicle = d.vehicle && fleet.get(d.vehicle.imei);
    if (!vehicle) return;
    const p = d.position;
    if (p && (!vehicle.lastReportUtc || Date.parse(p.fixTime) >= Date.parse(vehicle.lastReportUtc))) {
      Object.assign(vehicle, { latitude: p.lat, longitude: p.lng, speedKmh: p.speedKmh, heading: p.heading, lastReportUtc: p.fixTime });
    }
    if (event.type === 'vehicle.status.changed') vehicle.status = d.to;
    if (event.type === 'vehicle.ignition.on') vehicle.engineStatus = 'On';
    if (event.type === 'vehicle.ignition.off') vehicle.engineStatus = 'Off';
    extendTrail();
    render();
  }

  const setConnection = (state) => {
    connection.dataset.state = state;
    connection.textContent = { live: 'live', reconnecting: 'reconnecting…', offline: 'events offline', connecting: 'connecting…' }[state];
  };

  let stream;
  (async () => {
    // The newest events first, then the stream from just after them: no gap and no duplicate.
    let newest;
    try {
      const page = await api.get(`/events?limit=${INITIAL_EVENTS}`);
      if (stopped) return;
      newest = page.data[0]?.id;
      events.add([...page.data].reverse());
    } catch (error) {
      if (stopped || error.status === 401) return;
      problems.show('events', `${SOURCE_NAMES.events}: ${error.message}`);
    }
    if (stopped) return;
    stream = liveEvents(api, {
      eventTypes: document.body.dataset.eventTypes.split(','),
      afterId: newest,
      onEvent: (event) => {
        events.add([event]);
        apply(event);
      },
      onState: setConnection,
      onProblem: (message) => (message ? problems.show('events', message) : problems.clear('events')),
    });
  })();

  return {
    stop() {
      stopped = true;
      ending.abort();
      for (const task of [statusTask, geofenceTask, travelTask]) task.stop();
      stream?.stop();
      map.remove();
      vehicles.show([], undefined);
      details.hide();
      travelPanel.clear();
      events.clear();
      problems.clearAll();
      setConnection('connecting');
    },
  };
}
