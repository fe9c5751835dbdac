import { describe, expect, it } from 'vitest';
import { COMMAND_TYPES } from '../../domain/commands/command-catalog.ts';
import { EVENT_TYPES } from '../../domain/events/event-catalog.ts';
import { NOTIFIABLE_EVENT_TYPES } from './console-catalogs.ts';
import { PROTOCOLS } from '../routes/vehicles.ts';
import { CONSOLE_CONTENT_SECURITY_POLICY, consoleRoutes } from './console-routes.ts';

const body = (html: string) => /<body([^>]*)>/.exec(html)![1]!;

describe('the console page', () => {
  it('hands its scripts the protocols and command types the API takes, and no tile server when none is set', async () => {
    const response = await consoleRoutes().request('/');
    const attributes = body(await response.text());
    expect(attributes).toContain(`data-protocols="${PROTOCOLS.join(',')}"`);
    expect(PROTOCOLS).toEqual(expect.arrayContaining(['teltonika', 'osmand']));
    expect(attributes).toContain(`data-command-types="${COMMAND_TYPES.join(',')}"`);
    expect(attributes).not.toContain('data-tile-url');
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
  });

  it('with a tile server, hands over its template and attribution (as text) and lets images come from its origin alone', async () => {
    const response = await consoleRoutes({ url: 'https://tiles.example.com:8443/{z}/{x}/{y}.png', attribution: '© "Tiles" <b>' }).request('/');
    const attributes = body(await response.text());
    expect(attributes).toContain('data-tile-url="https://tiles.example.com:8443/{z}/{x}/{y}.png"');
    expect(attributes).toContain('data-tile-attribution="© &quot;Tiles&quot; &lt;b&gt;"');
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toContain("img-src 'self' data: https://tiles.example.com:8443;");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("connect-src 'self';");
  });
});

describe('the notification service worker', () => {
  it('is served at /console/notification-worker.js as JavaScript, under the console\'s policy, allowed the scope /console, and is no page file', async () => {
    const response = await consoleRoutes().request('/notification-worker.js');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    expect(response.headers.get('service-worker-allowed')).toBe('/console');
    const script = await response.text();
    expect(script).toContain("addEventListener('push'");
    expect(script).toContain("addEventListener('notificationclick'");
    expect((await consoleRoutes().request('/static/notification-worker.js')).status).toBe(404);
  });
});

describe('the notification catalog handed to the console', () => {
  it('offers every kind a rule may take and none it refuses', async () => {
    const attributes = body(await (await consoleRoutes().request('/')).text());
    const offered = /data-notifiable-event-types="([^"]*)"/.exec(attributes)![1]!.split(',');
    expect(offered).toEqual(NOTIFIABLE_EVENT_TYPES);
    expect(offered).toEqual(expect.arrayContaining(['vehicle.geofence.enter', 'vehicle.panic', 'device.offline', 'travel.delayed']));
    for (const refused of ['vehicle.position', 'webhook.test', 'webhook.disabled']) expect(offered).not.toContain(refused);
    expect(offered.length).toBe(EVENT_TYPES.length - 3);
  });
});
