/**
 * The page of a one-time link (`fleet user create`, `fleet user reset-password`): a form for the new
 * password; its script (static/set-password.js) reads the token from the URL's fragment and sends it
 * to POST /api/v1/auth/set-password. No inline script or style, as the map's policy allows neither.
 */
export const SET_PASSWORD_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>fleetcore: set your password</title>
  <link rel="icon" type="image/svg+xml" href="/map/static/icon.svg">
  <link rel="stylesheet" href="/map/static/map.css">
  <script type="module" src="/map/static/set-password.js"></script>
</head>
<body>
  <form id="set-password-form" class="set-password">
    <h1>Set your password</h1>
    <label>New password (at least 10 characters) <input id="new-password" type="password" autocomplete="new-password" minlength="10" required></label>
    <button type="submit">Set password</button>
    <p id="set-password-result" role="status"></p>
  </form>
</body>
</html>
`;
