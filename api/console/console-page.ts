import { NAMED_ONLY_PERMISSIONS } from '../../domain/access/permissions.ts';
import { catalogAttributes } from './console-catalogs.ts';
import { COMMAND_TYPES } from '../../domain/commands/command-catalog.ts';
import { tileAttributes } from '../map/map-page.ts';
import type { MapTiles } from '../map/map-tiles.ts';
import { PROTOCOLS } from '../routes/vehicles.ts';

/**
 * The console's one HTML page. Every view is drawn by the scripts (api/console/static) from the API's
 * answers; the page holds no data and no inline script or style (the Content-Security-Policy allows
 * neither). The permissions `*` does not cover are handed to the scripts in an attribute, so the menu
 * shows what the session can use by the same rule the API applies; so are the tracker protocols and
 * command types the API takes (the forms offer them), and the tile server's settings when there is one.
 */
export function consolePage(tiles?: MapTiles): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>fleetcore console</title>
  <link rel="icon" type="image/svg+xml" href="/map/static/icon.svg">
  <link rel="stylesheet" href="/map/leaflet/leaflet.css">
  <link rel="stylesheet" href="/console/vendor/leaflet-geoman.css">
  <link rel="stylesheet" href="/console/static/console.css">
  <script defer src="/map/leaflet/leaflet.js"></script>
  <script defer src="/console/vendor/leaflet-geoman.js"></script>
  <script type="module" src="/console/static/main.js"></script>
</head>
<body${catalogAttributes()} data-named-only="${[...NAMED_ONLY_PERMISSIONS].join(',')}" data-protocols="${PROTOCOLS.join(',')}" data-command-types="${COMMAND_TYPES.join(',')}"${tileAttributes(tiles)}>
  <a class="skip-link" href="#page">Skip to content</a>
  <section id="sign-in" class="sign-in" hidden>
    <form id="sign-in-form" class="sign-in-box" method="post">
      <h1>fleetcore</h1>
      <p>Sign in to manage your fleet, its keys and its users.</p>
      <label for="sign-in-email">Email</label>
      <input id="sign-in-email" name="email" type="email" autocomplete="username" required>
      <label for="sign-in-password">Password</label>
      <input id="sign-in-password" name="password" type="password" autocomplete="current-password" required>
      <button type="submit" class="primary">Sign in</button>
      <p id="sign-in-error" class="error" role="alert" hidden></p>
    </form>
  </section>
  <section id="setup" class="sign-in" hidden>
    <form id="setup-form" class="sign-in-box" method="post">
      <h1>Welcome to fleetcore</h1>
      <p>Create your account and its owner: you. You can invite the rest of your team once signed in.</p>
      <label for="setup-account">Account name</label>
      <input id="setup-account" name="accountName" autocomplete="organization" required maxlength="200">
      <label for="setup-name">Your name</label>
      <input id="setup-name" name="name" autocomplete="name" maxlength="200">
      <label for="setup-email">Email</label>
      <input id="setup-email" name="email" type="email" autocomplete="username" required>
      <label for="setup-timezone">Time zone</label>
      <input id="setup-timezone" name="timezone" required aria-describedby="setup-timezone-hint">
      <small id="setup-timezone-hint" class="hint">An IANA time zone, such as America/Mexico_City: reports and travels use it.</small>
      <label for="setup-password">Password</label>
      <input id="setup-password" name="password" type="password" autocomplete="new-password" required minlength="10" aria-describedby="setup-password-hint">
      <small id="setup-password-hint" class="hint">At least 10 characters.</small>
      <button type="submit" class="primary">Create account</button>
      <p id="setup-error" class="error" role="alert" hidden></p>
    </form>
  </section>
  <div id="shell" class="shell" hidden>
    <header class="bar">
      <button id="menu-toggle" class="menu-toggle" type="button" aria-controls="nav" aria-expanded="false">Menu</button>
      <a class="brand" href="#/">fleetcore</a>
      <span id="who" class="who"></span>
      <button id="sign-out" type="button">Sign out</button>
    </header>
    <div class="body">
      <nav id="nav" class="nav" aria-label="Console"></nav>
      <main id="page" class="page" tabindex="-1"></main>
    </div>
  </div>
  <div id="notice" class="notice" role="status" aria-live="polite" hidden></div>
</body>
</html>
`;
}
