// The console's screenshots in docs/console/: `npm run docs:screenshots`. Starts `fleet serve` with the
// demo fleet driving on a database of its own, adds what makes each page show something (a key, a
// webhook, a dispatcher, a group, a notification rule, a report email), signs in as the demo owner
// and photographs each page on a laptop's screen, and the overview on a phone's. Names given
// (`npm run docs:screenshots -- keys users`) take only those.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './fleet-process.ts';
import { addUser, curl, launchChromium, sessionOf, signIn, startDemoServer } from './console-browser.ts';

const OUT = join(root, 'docs/console');
const PAGES: Array<[file: string, hash: string]> = [
  ['overview', '/'], ['map', '/map'], ['vehicles', '/vehicles'], ['geofences', '/geofences'], ['travels', '/travels'],
  ['commands', '/commands'], ['keys', '/keys'], ['oauth-clients', '/oauth-clients'], ['notifications', '/notifications'], ['webhooks', '/webhooks'],
  ['users', '/users'], ['groups', '/groups'], ['audit', '/audit'], ['account', '/account'], ['my-notifications', '/my-notifications'],
];

async function must(what: string, answer: Promise<{ status: number; body: unknown }>) {
  const { status, body } = await answer;
  if (status >= 300) throw new Error(`${what}: ${status} ${JSON.stringify(body)}`);
  return body as { data: any };
}

// An embedded database of its own (the first start initialises it: about 20 s).
const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-screenshots-'));
const database = { env: { DATA_DIR: dataDir }, dataDir, name: undefined, destroy: async () => rmSync(dataDir, { recursive: true, force: true }) };
const demo = await startDemoServer({ simulate: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, database });
const browser = await launchChromium();
try {
  mkdirSync(OUT, { recursive: true });
  const owner = await sessionOf(demo.base, demo.email, demo.password);
  await must('key', owner('/api-keys', { method: 'POST', body: { name: 'Dispatch integration', permissions: ['devices:read', 'events:read'] } }));
  await must('webhook', curl(demo.base, demo.key, '/webhooks', { method: 'POST', body: { url: 'http://127.0.0.1:9/fleet-events', events: ['vehicle.geofence.*', 'travel.*'] } }));
  await addUser(demo, 'dispatcher');
  await addUser(demo, 'viewer');
  const vehicles = (await must('vehicles', curl(demo.base, demo.key, '/vehicles'))).data as Array<{ id: number }>;
  const group = (await must('group', owner('/groups', { method: 'POST', body: { name: 'North depot', vehicle_ids: vehicles.slice(0, 2).map((v) => v.id) } }))).data as { id: number };
  const me = (await must('me', owner('/users/me'))).data as { id: number };
  await must('rule', owner('/notification-rules', { method: 'POST', body: {
    name: 'North depot at night', events: ['vehicle.geofence.enter', 'vehicle.panic'], vehicles: { scope: 'groups', groupIds: [group.id] },
    schedule: { days: [1, 2, 3, 4, 5, 6, 7], from: '20:00', to: '06:00' }, minIntervalSeconds: 600, recipients: [{ userId: me.id, channels: ['email', 'telegram'] }],
  } }));
  await must('channels', owner('/users/me/notification-channels', { method: 'PATCH', body: { telegramChatId: '123456789' } }));
  await must('report', owner('/users/me/report-subscriptions', { method: 'POST', body: { frequency: 'weekly', reports: ['trips', 'geofences'], time: '07:00', weekday: 1 } }));
  // The simulated trackers report every 5 s: let them move and raise a few events first.
  await new Promise((resolve) => setTimeout(resolve, 20_000));

  const shoot = async (viewport: { width: number; height: number }, pages: Array<[string, string]>, suffix = '') => {
    const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await page.goto(`${demo.base}/console`);
    await signIn(page, demo.email, demo.password);
    for (const [file, hash] of pages) {
      await page.goto(`${demo.base}/console#${hash}`);
      await page.locator('#page .loading').waitFor({ state: 'detached', timeout: 15_000 }).catch(() => {});
      await page.waitForLoadState('networkidle').catch(() => {});
      await page.waitForTimeout(hash === '/map' ? 4_000 : 1_500);
      await page.screenshot({ path: join(OUT, `${file}${suffix}.png`) });
      process.stdout.write(`docs/console/${file}${suffix}.png\n`);
    }
    await context.close();
  };
  const only = new Set(process.argv.slice(2));
  const wanted = (name: string) => only.size === 0 || only.has(name);
  await shoot({ width: 1280, height: 800 }, PAGES.filter(([file]) => wanted(file)));
  if (wanted('phone')) await shoot({ width: 390, height: 844 }, [['phone', '/']]);
  if (wanted('sign-in')) {
    // The sign-in page, before any session.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${demo.base}/console`);
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    await page.screenshot({ path: join(OUT, 'sign-in.png') });
    await context.close();
  }
} finally {
  await browser.close();
  await demo.stop();
}
