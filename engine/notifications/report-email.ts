import type { AccessScope } from '../../db/access-scope.ts';
import type { Db } from '../../db/database.ts';
import { visibleDevicesByImei } from '../../db/devices.ts';
import { visitsOverlapping } from '../../db/geofence-activity.ts';
import { visibleMaintenanceItems } from '../../db/maintenance.ts';
import { vehicleTotals } from '../../db/trip-report.ts';
import { grants, type Permission } from '../../domain/access/permissions.ts';
import { rolePermissions } from '../../domain/access/roles.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { escapeHtml, type NotificationMessage } from '../../domain/notifications/notification-message.ts';
import { REPORT_KINDS, type ReportKind } from '../../domain/notifications/report-schedule.ts';
import { formatLocal, wallClockAt } from '../../domain/time/zoned-time.ts';
import { tripKpis } from '../../domain/trips/trip-kpis.ts';
import { maintenanceCsv, maintenanceNeedingAttention, tripsCsv, visitsCsv, type MaintenanceLine, type ReportVehicle } from './report-tables.ts';

/** A scheduled report's delivery: whose, which subscription, and the period it reports on, [start, end). */
export interface ReportDelivery {
  accountId: number;
  userId: number;
  reportSubscriptionId: number;
  periodStart: Date;
  periodEnd: Date;
}

/** Visits one attachment holds at most, as one answer of the geofence report: more are cut, and the email says so. */
export const MAX_VISITS = 50_000;
/** Vehicles the email's own table lists; the attachment has them all. */
const LISTED_VEHICLES = 20;

const NEEDS: Record<ReportKind, Permission> = { trips: 'reports:read', geofences: 'reports:read', maintenance: 'maintenance:read' };
const CSV = 'text/csv; charset=utf-8';
/** A byte order mark, so that spreadsheets open the file as UTF-8 (accented names stay readable). */
const BOM = '\uFEFF';

const number = (n: number) => n.toLocaleString('en', { maximumFractionDigits: 1 });

interface Headline {
  label: string;
  value: string;
}

/**
 * The email of one scheduled report: a CSV attachment per report subscribed to, over the vehicles the
 * user may see in the subscription's mode, with times in the subscription's timezone; a subject
 * naming the period; and text and HTML versions with the headline numbers. A report the user's role
 * no longer allows is left out, and the email says so. `now` is when an open visit's duration and a
 * calendar item's status are counted to.
 *
 * A subscription that no longer exists, or a user who was removed, is a DomainError: nothing to send.
 */
export async function buildReportEmail(db: Db, delivery: ReportDelivery, now = new Date()): Promise<NotificationMessage> {
  const subscription = await db
    .selectFrom('report_subscriptions')
    .select(['id', 'user_id', 'mode', 'frequency', 'reports', 'timezone'])
    .where('id', '=', delivery.reportSubscriptionId)
    .where('account_id', '=', delivery.accountId)
    .executeTakeFirst();
  if (!subscription || subscription.user_id !== delivery.userId) throw new DomainError('not_found', `Report subscription ${delivery.reportSubscriptionId} no longer exists`);
  const user = await db.selectFrom('users').select(['name', 'email', 'role', 'removed_at']).where('id', '=', delivery.userId).executeTakeFirst();
  if (!user || user.removed_at !== null) throw new DomainError('not_found', `User ${delivery.userId} was removed`);

  const timeZone = subscription.timezone;
  const scope: AccessScope = { accountId: delivery.accountId, userId: delivery.userId, mode: subscription.mode };
  const asked = REPORT_KINDS.filter((k) => subscription.reports.includes(k));
  const allowed = asked.filter((k) => grants(rolePermissions(user.role), NEEDS[k]));
  const refused = asked.filter((k) => !allowed.includes(k));

  const { periodStart: start, periodEnd: end } = delivery;
  // The API's reports take an inclusive end; the period's is exclusive.
  const to = new Date(end.getTime() - 1);
  const first = formatLocal(start, timeZone).slice(0, 10);
  const last = formatLocal(to, timeZone).slice(0, 10);
  const fileDates = `${dateOf(start, timeZone)}-${dateOf(to, timeZone)}`;
  const periodText = first === last ? first : `${first} – ${last}`;
  const subject = subscription.frequency === 'weekly' ? `Weekly fleet summary, ${periodText}` : `Fleet summary, ${periodText}`;

  const vehicles: ReportVehicle[] = await visibleDevicesByImei(db, scope);
  const deviceIds = vehicles.map((v) => v.id);
  const headlines: Headline[] = [{ label: 'Vehicles', value: number(vehicles.length) }];
  const notes: string[] = [];
  const attachments: NonNullable<NotificationMessage['attachments']> = [];
  let vehicleTable: Array<{ name: string; trips: number; km: number }> = [];

  if (allowed.includes('trips')) {
    const totals = deviceIds.length > 0 ? await vehicleTotals(db, { deviceIds, from: start, to }) : [];
    const byDevice = new Map(totals.map((t) => [t.device_id, t]));
    const rangeS = (end.getTime() - start.getTime()) / 1000;
    const fleet = tripKpis(totals, rangeS);
    headlines.push({ label: 'Trips', value: number(fleet.tripCount) }, { label: 'Distance', value: `${number(fleet.distanceKm)} km` });
    attachments.push({ filename: `trips-${fileDates}.csv`, content: BOM + tripsCsv(vehicles, byDevice, rangeS), contentType: CSV });
    vehicleTable = vehicles
      .map((v) => {
        const own = byDevice.get(v.id);
        const k = tripKpis(own ? [own] : [], rangeS);
        return { name: v.name, trips: k.tripCount, km: k.distanceKm };
      })
      .sort((a, b) => b.km - a.km || b.trips - a.trips);
  }
  if (allowed.includes('geofences')) {
    const filter = { deviceIds, accountId: delivery.accountId, mode: subscription.mode, geofenceIds: [], from: start, to };
    const visits = deviceIds.length > 0 ? await visitsOverlapping(db, filter, MAX_VISITS + 1) : [];
    if (visits.length > MAX_VISITS) {
      visits.length = MAX_VISITS;
      notes.push(`The geofence report holds the first ${MAX_VISITS.toLocaleString('en')} visits only; the API's geofence report has them all.`);
    }
    headlines.push({ label: 'Geofence visits', value: number(visits.length) });
    attachments.push({ filename: `geofences-${fileDates}.csv`, content: BOM + visitsCsv(visits, timeZone, now), contentType: CSV });
  }
  if (allowed.includes('maintenance')) {
    const lines = maintenanceNeedingAttention(await visibleMaintenanceItems(db, scope), now);
    headlines.push({ label: 'Maintenance due', value: maintenanceHeadline(lines) });
    attachments.push({ filename: 'maintenance-due.csv', content: BOM + maintenanceCsv(lines), contentType: CSV });
  }
  for (const k of refused) notes.push(`The ${k} report was left out: your role no longer allows it.`);

  const greeting = `Hello${user.name ? ` ${user.name}` : ''},`;
  const intro = `${subscription.frequency === 'weekly' ? 'Your weekly' : 'Your daily'} fleet summary for ${periodText} (${timeZone}).`;
  const shown = vehicleTable.slice(0, LISTED_VEHICLES);
  const more = vehicleTable.length - shown.length;
  const text = [
    greeting, '', intro, '',
    ...headlines.map((h) => `${h.label}: ${h.value}`),
    ...(shown.length > 0 ? ['', 'By vehicle (trips, km):', ...shown.map((v) => `  ${v.name}: ${v.trips}, ${number(v.km)} km`)] : []),
    ...(more > 0 ? [`  … and ${more} more in the attachment`] : []),
    ...(notes.length > 0 ? ['', ...notes] : []),
    '', attachments.length > 0 ? `Attached: ${attachments.map((a) => a.filename).join(', ')}.` : 'No reports attached.',
  ].join('\n');
  const html = [
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>${escapeHtml(intro)}</p>`,
    '<table cellpadding="4" style="border-collapse:collapse">',
    ...headlines.map((h) => `<tr><th align="left">${escapeHtml(h.label)}</th><td align="right">${escapeHtml(h.value)}</td></tr>`),
    '</table>',
    ...(shown.length > 0
      ? [
          '<table cellpadding="4" style="border-collapse:collapse;margin-top:12px">',
          '<tr><th align="left">Vehicle</th><th align="right">Trips</th><th align="right">km</th></tr>',
          ...shown.map((v) => `<tr><td>${escapeHtml(v.name)}</td><td align="right">${v.trips}</td><td align="right">${escapeHtml(number(v.km))}</td></tr>`),
          ...(more > 0 ? [`<tr><td colspan="3">… and ${more} more in the attachment</td></tr>`] : []),
          '</table>',
        ]
      : []),
    ...notes.map((n) => `<p>${escapeHtml(n)}</p>`),
    `<p style="color:#666">${escapeHtml(attachments.length > 0 ? `Attached: ${attachments.map((a) => a.filename).join(', ')}.` : 'No reports attached.')}</p>`,
  ].join('\n');
  const short = `${subject}: ${headlines.map((h) => `${h.value} ${h.label.toLowerCase()}`).join(', ')}`;
  return { subject, text, html, short, attachments };
}

/** `YYYY-MM-DD` of an instant's local date, for file names. */
function dateOf(instant: Date, timeZone: string): string {
  const c = wallClockAt(instant.getTime(), timeZone);
  return `${String(c.year).padStart(4, '0')}-${String(c.month).padStart(2, '0')}-${String(c.day).padStart(2, '0')}`;
}

/** `3 (1 overdue, 1 due, 1 due soon)`, or `0`. */
function maintenanceHeadline(lines: readonly MaintenanceLine[]): string {
  const count = (s: MaintenanceLine['status']) => lines.filter((l) => l.status === s).length;
  const parts = [[count('overdue'), 'overdue'], [count('due'), 'due'], [count('dueSoon'), 'due soon']].filter(([n]) => Number(n) > 0);
  return parts.length === 0 ? '0' : `${lines.length} (${parts.map(([n, what]) => `${n} ${what}`).join(', ')})`;
}
