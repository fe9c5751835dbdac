// The Leaflet map: the graticule base layer (over a tile server's map when one is configured),
// geofences, vehicle markers coloured by status, the selected vehicle's trail and the travels' routes.
// It draws what it is given and keeps no data.

import { element } from './element.js';
import { graticule } from './graticule.js';

const L = globalThis.L;

/** The CSS class of a device status (Moving, Stopped, Off, Inactive). */
export const statusClass = (status) => `status-${String(status).toLowerCase().replace(/\s+/g, '-')}`;

/** A marker's face: a dot in the status colour with a heading tick, and the vehicle's name. */
function vehicleFace(vehicle) {
  const face = element('div', 'vehicle-face');
  face.dataset.deviceId = vehicle.deviceId;
  face.append(element('span', 'vehicle-dot'), element('span', 'vehicle-heading'), element('span', 'vehicle-label'));
  return face;
}

function paintFace(face, vehicle, selected) {
  face.className = `vehicle-face ${statusClass(vehicle.status)}${selected ? ' selected' : ''}`;
  face.title = `${vehicle.name} (${vehicle.plates}): ${vehicle.status}`;
  face.querySelector('.vehicle-label').textContent = vehicle.name;
  const heading = face.querySelector('.vehicle-heading');
  // Set through the CSSOM: the Content-Security-Policy forbids style attributes, not this.
  heading.hidden = vehicle.heading === null || vehicle.status !== 'Moving';
  heading.style.transform = `rotate(${vehicle.heading ?? 0}deg)`;
}

/** Leaflet shows an attribution as HTML; the operator's setting is text. */
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `tiles`: `{ url, attribution }` of a raster tile server (MAP_TILE_URL), drawn under the graticule;
 * undefined: the graticule alone, and the map loads nothing from elsewhere.
 */
export function fleetMap(container, { onVehicleClick, tiles }) {
  const map = L.map(container, { zoomControl: true, worldCopyJump: true }).setView([20, 0], 2);
  if (tiles) L.tileLayer(tiles.url, { attribution: escapeHtml(tiles.attribution), maxNativeZoom: 19, maxZoom: 24, zIndex: 0 }).addTo(map);
  graticule().addTo(map);
  L.control.scale({ imperial: false }).addTo(map);

  const geofences = L.featureGroup().addTo(map);
  const travelLines = L.layerGroup().addTo(map);
  const travelBadges = L.layerGroup().addTo(map);
  let badgesShown;
  const trail = L.layerGroup().addTo(map);
  const vehicles = L.featureGroup().addTo(map);
  /** deviceId → { marker, face } */
  const markers = new Map();
  let selectedId;
  let fitted = false;

  return {
    showGeofences(list) {
      geofences.clearLayers();
      for (const g of list) {
        const options = { className: 'geofence', weight: 2 };
        const shape = g.type === 'circle'
          ? L.circle([g.centerLat, g.centerLng], { ...options, radius: g.radiusMeters })
          : L.polygon(g.vertices.map((v) => [v.lat, v.lng]), options);
        geofences.addLayer(shape);
        // The name under the shape, not on it: vehicles park at geofences' centres.
        const south = shape.getBounds().getSouth();
        geofences.addLayer(L.tooltip({ permanent: true, direction: 'bottom', className: 'geofence-label', interactive: false })
          .setLatLng([south, g.centerLng])
          .setContent(element('span', '', g.name)));
      }
    },

    /** Adds, moves or repaints each vehicle with a position; drops markers of vehicles no longer listed. */
    showVehicles(list) {
      const seen = new Set();
      for (const v of list) {
        if (v.latitude === null || v.longitude === null) continue;
        seen.add(v.deviceId);
        let entry = markers.get(v.deviceId);
        if (!entry) {
          const face = vehicleFace(v);
          const marker = L.marker([v.latitude, v.longitude], {
            icon: L.divIcon({ html: face, className: 'vehicle-marker', iconSize: null }),
            keyboard: true,
            title: v.name,
            riseOnHover: true,
          });
          marker.on('click', () => onVehicleClick(v.deviceId));
          vehicles.addLayer(marker);
          entry = { marker, face };
          markers.set(v.deviceId, entry);
        } else {
          entry.marker.setLatLng([v.latitude, v.longitude]);
        }
        paintFace(entry.face, v, v.deviceId === selectedId);
      }
      for (const [id, entry] of markers) {
        if (seen.has(id)) continue;
        vehicles.removeLayer(entry.marker);
        markers.delete(id);
      }
    },

    select(deviceId) {
      selectedId = deviceId;
      for (const [id, { marker, face }] of markers) {
        face.classList.toggle('selected', id === deviceId);
        marker.setZIndexOffset(id === deviceId ? 1000 : 0); // the selected vehicle on top of the others
      }
    },

    /** The selected vehicle's trail, oldest point first; an empty list clears it. */
    showTrail(points) {
      trail.clearLayers();
      if (points.length < 2) return;
      L.polyline(points.map((p) => [p.lat, p.lng]), { className: 'trail', weight: 4, interactive: false }).addTo(trail);
    },

    /**
     * Each travel: a dashed line over what is left to drive (from the vehicle through its pending
     * waypoints) and a numbered badge on every waypoint, whose tooltip has its times.
     */
    showTravels(routes) {
      travelLines.clearLayers();
      for (const route of routes) {
        if (route.line.length >= 2) L.polyline(route.line, { className: 'travel-route', weight: 3, interactive: false }).addTo(travelLines);
      }
      // The badges are redrawn only when they change: redrawing would close a tooltip being read.
      const signature = JSON.stringify(routes.map((r) => r.waypoints));
      if (signature === badgesShown) return;
      badgesShown = signature;
      travelBadges.clearLayers();
      for (const route of routes) {
        for (const w of route.waypoints) {
          const badge = element('span', `waypoint-badge waypoint-${w.status.toLowerCase()}`, String(w.order));
          L.marker([w.lat, w.lng], { icon: L.divIcon({ html: badge, className: 'waypoint-marker', iconSize: null }), keyboard: false })
            .bindTooltip(element('span', '', w.label), { direction: 'top', offset: [0, -36] })
            .addTo(travelBadges);
        }
      }
    },

    /** Frames the geofences and vehicles, once: after that the view is the user's. */
    fitOnce() {
      if (fitted) return;
      const bounds = L.latLngBounds([]);
      if (geofences.getLayers().length > 0) bounds.extend(geofences.getBounds());
      if (vehicles.getLayers().length > 0) bounds.extend(vehicles.getBounds());
      if (!bounds.isValid()) return;
      fitted = true;
      map.fitBounds(bounds.pad(0.08), { animate: false, maxZoom: 15 });
    },

    panTo(lat, lng) {
      map.panTo([lat, lng]);
    },

    remove() {
      map.remove();
    },
  };
}
