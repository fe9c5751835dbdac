// The console's pages: where each lives (the URL's hash), its menu section, the permissions it needs
// to be shown at all, and its module. A page module exports `render(main, ctx)`, which draws the page
// into `main` (a container below the page's heading) and may return a function that stops what it started (timers, streams, maps) when the
// reader leaves. ctx: { api, session, can(permission), navigate(path), query (URLSearchParams) }.

export const PAGES = [
  { path: '/', title: 'Overview', section: 'Fleet', needs: [], load: () => import('./page-overview.js') },
  { path: '/map', title: 'Live map', section: 'Fleet', needs: ['devices:read'], load: () => import('./page-map.js') },
  { path: '/vehicles', title: 'Vehicles', section: 'Fleet', needs: ['vehicles:read'], load: () => import('./page-vehicles.js') },
  { path: '/geofences', title: 'Geofences', section: 'Fleet', needs: ['geofences:read'], load: () => import('./page-geofences.js') },
  { path: '/travels', title: 'Travels', section: 'Fleet', needs: ['travels:read'], load: () => import('./page-travels.js') },
  { path: '/commands', title: 'Commands', section: 'Fleet', needs: ['commands:read'], load: () => import('./page-commands.js') },
  { path: '/keys', title: 'API keys', section: 'Settings', needs: ['keys:read'], load: () => import('./page-keys.js') },
  { path: '/oauth-clients', title: 'OAuth clients', section: 'Settings', needs: ['keys:read'], load: () => import('./page-oauth-clients.js') },
  { path: '/notifications', title: 'Notifications', section: 'Settings', needs: ['notifications:read'], load: () => import('./page-notifications.js') },
  { path: '/webhooks', title: 'Webhooks', section: 'Settings', needs: ['webhooks:read'], load: () => import('./page-webhooks.js') },
  { path: '/users', title: 'Users', section: 'Settings', needs: ['users:read'], load: () => import('./page-users.js') },
  { path: '/groups', title: 'Vehicle groups', section: 'Settings', needs: ['users:read'], load: () => import('./page-groups.js') },
  { path: '/audit', title: 'Audit log', section: 'Settings', needs: ['audit:read'], load: () => import('./page-audit.js') },
  { path: '/account', title: 'My account', section: 'Settings', needs: [], load: () => import('./page-account.js') },
  { path: '/my-notifications', title: 'My notifications', section: 'Settings', needs: [], load: () => import('./page-my-notifications.js') },
];

/** The page a hash path names (`#/vehicles/12` → Vehicles, with `12` as its rest), or undefined. */
export function pageAt(path) {
  const exact = PAGES.find((p) => p.path === path);
  if (exact) return { page: exact, rest: '' };
  const page = PAGES.find((p) => p.path !== '/' && path.startsWith(`${p.path}/`));
  return page ? { page, rest: path.slice(page.path.length + 1) } : undefined;
}
