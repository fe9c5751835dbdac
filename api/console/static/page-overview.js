// The overview: how many vehicles and where they stand, and the first steps for a new account.
import { problemText } from './console-api.js';
import { h } from './dom.js';

export async function render(main, { api, can, session }) {
  const stats = h('div', { class: 'stats' });
  main.append(h('p', {}, `Signed in as ${session.user.email}, ${session.role} of account ${session.user.accountId}.`), stats);
  if (can('devices:read')) {
    try {
      const status = (await api.get('/devices/status')).data;
      const count = (state) => status.filter((s) => s.status === state).length;
      stats.append(
        h('div', { class: 'stat' }, h('strong', {}, String(status.length)), 'vehicles'),
        h('div', { class: 'stat' }, h('strong', {}, String(count('Moving'))), 'moving'),
        h('div', { class: 'stat' }, h('strong', {}, String(count('Stopped'))), 'stopped'),
        h('div', { class: 'stat' }, h('strong', {}, String(status.length - count('Moving') - count('Stopped'))), 'off or inactive'));
    } catch (error) {
      stats.append(h('p', { class: 'error', role: 'alert' }, problemText(error)));
    }
  }
  const step = (allowed, link, text, rest) => (allowed ? h('li', {}, h('a', { href: link }, text), rest) : null);
  main.append(h('h2', {}, 'Getting started'), h('ol', { class: 'steps' },
    step(can('keys:write'), '#/keys', 'Create an API key', ' for your integration or script: it is shown once.'),
    step(can('vehicles:write'), '#/vehicles', 'Add a tracker', ' by its IMEI and protocol, then point the device at this server.'),
    step(can('geofences:write'), '#/geofences', 'Draw a geofence', ' to be told when vehicles enter and leave it.'),
    step(can('webhooks:write'), '#/webhooks', 'Register a webhook', ' to receive events as they happen.'),
    step(can('users:write'), '#/users', 'Invite your team', ' with the role each needs.'),
    step(can('devices:read'), '#/map', 'Watch the live map', '.'),
  ));
}
