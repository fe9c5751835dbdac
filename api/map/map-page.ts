import { EVENT_TYPES } from '../../domain/events/event-catalog.ts';
import type { MapTiles } from './map-tiles.ts';

/** A value inside a double-quoted attribute: the tile settings are the operator's text. */
const attribute = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The tile server's template and attribution for the scripts, or nothing (the offline graticule alone). */
export const tileAttributes = (tiles?: MapTiles) =>
  tiles ? ` data-tile-url="${attribute(tiles.url)}" data-tile-attribution="${attribute(tiles.attribution)}"` : '';

/**
 * The live map's HTML. It holds no data and no inline script or style (the Content-Security-Policy
 * allows neither); the event types are handed to the scripts in an attribute, because an EventSource
 * delivers a named SSE event only to a listener registered under that name, and so are the tile
 * server's settings when there is one.
 */
export function mapPage(tiles?: MapTiles): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>fleetcore live map</title>
  <link rel="icon" type="image/svg+xml" href="/map/static/icon.svg">
  <link rel="stylesheet" href="/map/leaflet/leaflet.css">
  <link rel="stylesheet" href="/map/static/map.css">
  <script defer src="/map/leaflet/leaflet.js"></script>
  <script type="module" src="/map/static/main.js"></script>
</head>
<body data-event-types="${EVENT_TYPES.join(',')}"${tileAttributes(tiles)}>
  <section id="login" class="login" hidden>
    <form id="sign-in-form" class="login-box" method="post">
      <h1>fleetcore live map</h1>
      <label for="sign-in-email">Email</label>
      <input id="sign-in-email" name="email" type="email" autocomplete="username" required>
      <label for="sign-in-password">Password</label>
      <input id="sign-in-password" name="password" type="password" autocomplete="current-password" required>
      <button type="submit">Sign in</button>
      <p id="sign-in-error" class="login-error" role="alert" hidden></p>
    </form>
    <form id="login-form" class="login-box" method="post" autocomplete="off">
      <p>Or enter an API key with <code>devices:read</code>, <code>geofences:read</code>, <code>vehicles:read</code>,
        <code>travels:read</code> and <code>events:read</code>. It is kept in this tab's session storage only
        (gone when the tab closes) and sent only to this server.</p>
      <label for="api-key">API key</label>
      <input id="api-key" name="key" type="password" autocomplete="off" spellcheck="false" required placeholder="fc_live_…">
      <button type="submit">Open the map</button>
      <p id="login-error" class="login-error" role="alert" hidden></p>
    </form>
  </section>
  <div id="app" class="app" hidden>
    <header class="bar">
      <h1>fleetcore live map</h1>
      <span id="connection" class="connection" data-state="connecting">connecting…</span>
      <button id="logout" type="button">Log out</button>
    </header>
    <main class="layout">
      <div id="map" class="map" role="region" aria-label="Fleet map"></div>
      <aside class="sidebar">
        <p id="problem" class="problem" role="alert" hidden></p>
        <section>
          <h2>Vehicles</h2>
          <p class="legend">
            <span class="status status-moving">Moving</span><span class="status status-stopped">Stopped</span><span class="status status-off">Off</span><span class="status status-inactive">Inactive</span>
          </p>
          <ul id="vehicle-list" class="vehicle-list"></ul>
        </section>
        <section id="selected" hidden>
          <h2 id="selected-name"></h2>
          <dl id="selected-details" class="details"></dl>
        </section>
        <section>
          <h2>Travels</h2>
          <ul id="travel-list" class="travel-list"></ul>
        </section>
        <section>
          <h2>Events <small>newest first</small></h2>
          <ol id="event-list" class="event-list"></ol>
        </section>
      </aside>
    </main>
  </div>
</body>
</html>
`;
}
