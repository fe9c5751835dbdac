// One logged-in session of the map: the panels, the state they show (fleet-state.js), how often each
// part is read again, and live events moving it in between (event-panel.js).

import { apiClient } from './api-client.js';
import { startEventFeed } from './event-panel.js';
import { eventList } from './event-list.js';
import { fleetMap } from './fleet-map.js';
import { fleetState } from './fleet-state.js';
import { periodicTask } from './periodic-task.js';
import { problemBanner, travelList, vehicleDetails, vehicleList } from './sidebar.js';
import { vehicleSelection } from './vehicle-selection.js';

// Trackers commonly report every 5 to 30 s (the demo's every 5 s); the status endpoint is in the
// detailed rate limit (50 requests per 10 s per key), which this leaves nearly all to other clients.
const STATUS_EVERY_MS = 5_000;
// The server refreshes ETAs about every 30 s; travel events bring a refresh forward.
const TRAVELS_EVERY_MS = 30_000;
const GEOFENCES_EVERY_MS = 60_000;
/** Travels read in full (one request each) on a refresh; the rest are only counted. */
const MAX_TRAVEL_DETAILS = 10;
const SOURCE_NAMES = { status: 'Vehicle status', geofences: 'Geofences', travels: 'Travels', trail: 'Trail' };

const byId = (id) => document.getElementById(id);

export function startSession(key, { onUnauthorized, csrfToken }) {
  let stopped = false;
  const isStopped = () => stopped;
  // Ending the session aborts its requests in flight, so no answer lands on the login box's page.
  const ending = new AbortController();
  const api = apiClient(key, ending.signal, (error) => {
    if (!stopped) onUnauthorized(error);
  }, csrfToken);
  const fleet = fleetState();
  const problems = problemBanner(byId('problem'));
  const { tileUrl, tileAttribution } = document.body.dataset;
  const map = fleetMap(byId('map'), {
    onVehicleClick: (deviceId) => selection.select(deviceId),
    tiles: tileUrl ? { url: tileUrl, attribution: tileAttribution ?? '' } : undefined,
  });
  const vehicles = vehicleList(byId('vehicle-list'), { onSelect: (deviceId) => selection.select(deviceId) });
  const details = vehicleDetails(byId('selected'));
  const travelPanel = travelList(byId('travel-list'));
  const events = eventList(byId('event-list'), { onEventClick: (e) => map.panTo(e.data.position.lat, e.data.position.lng) });
  const connection = byId('connection');
  const selection = vehicleSelection(api, {
    map, details, fleet, isStopped,
    onChange: render,
    onTrailProblem: (error) => (error ? problems.show('trail', `${SOURCE_NAMES.trail}: ${error.message}`) : problems.clear('trail')),
  });
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

  function render() {
    if (stopped) return;
    const list = fleet.vehicles();
    map.showVehicles(list);
    vehicles.show(list, selection.deviceId());
    const vehicle = selection.deviceId() !== undefined && fleet.vehicle(selection.deviceId());
    if (vehicle) details.show(vehicle, selection.trailLength(), fleet.travelOf(vehicle));
    map.showTravels(fleet.travelRoutes());
  }

  const statusTask = periodicTask(STATUS_EVERY_MS, reported('status', async () => {
    const list = (await api.get('/devices/status')).data;
    if (stopped) return;
    fleet.setStatus(list);
    selection.extendTrail();
    render();
  }));

  const geofenceTask = periodicTask(GEOFENCES_EVERY_MS, reported('geofences', async () => {
    const list = (await api.get('/geofences')).data;
    if (stopped) return;
    fleet.setGeofences(list);
    map.showGeofences(list);
    render();
  }));

  const travelTask = periodicTask(TRAVELS_EVERY_MS, reported('travels', async () => {
    const summaries = (await api.get('/travels')).data;
    const shown = summaries.slice(0, MAX_TRAVEL_DETAILS);
    const full = await Promise.all(shown.map(async (t) => (await api.get(`/travels/${t.travelId}`)).data));
    if (stopped) return;
    fleet.setTravels(full);
    travelPanel.show(full, summaries.length);
    render();
  }));

  const setConnection = (state) => {
    connection.dataset.state = state;
    connection.textContent = { live: 'live', reconnecting: 'reconnecting…', offline: 'events offline', connecting: 'connecting…' }[state];
  };

  const stream = startEventFeed(api, {
    events,
    eventTypes: document.body.dataset.eventTypes.split(','),
    isStopped,
    onEvent(event) {
      const stale = fleet.apply(event);
      if (stale.travels) travelTask.runNow();
      if (stale.geofences) geofenceTask.runNow();
      selection.extendTrail();
      render();
    },
    onState: setConnection,
    onProblem: (message) => (message ? problems.show('events', message) : problems.clear('events')),
  });

  return {
    stop() {
      stopped = true;
      ending.abort();
      for (const task of [statusTask, geofenceTask, travelTask]) task.stop();
      void stream.then((s) => s?.stop());
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
