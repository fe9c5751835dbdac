import { z } from '@hono/zod-openapi';
import type { MaintenanceItem, MaintenanceService } from '../../db/maintenance.ts';
import {
  currentReading, MAINTENANCE_KINDS, MAINTENANCE_STATUSES, MAINTENANCE_UNITS, maintenanceStatus, remaining, type DueSoonWindow,
} from '../../domain/maintenance/maintenance-schedule.ts';

const threshold = (description: string) =>
  z.union([z.number(), z.string().openapi({ format: 'date' })]).openapi({ description, example: 130_000 });

export const MaintenanceItemSchema = z
  .object({
    id: z.number().int().openapi({ example: 31 }),
    vehicle: z.object({ id: z.string().openapi({ description: 'The IMEI', example: '356307042441013' }), name: z.string().openapi({ example: 'Truck 12' }) }),
    name: z.string().openapi({ example: 'Oil change' }),
    kind: z.enum(MAINTENANCE_KINDS).openapi({ description: 'What the item counts by: the odometer, engine hours or the calendar' }),
    unit: z.enum(['km', 'h', 'days']).openapi({ description: 'The unit of `interval`, `tolerance` and `remaining`' }),
    interval: z.number().openapi({ description: 'Every this many km, hours or days', example: 10_000 }),
    tolerance: z.number().openapi({ description: 'How far past `nextDue` the item becomes overdue', example: 1_000 }),
    nextDue: threshold('The next threshold: km or hours, or a date (`YYYY-MM-DD`, UTC) for calendar items'),
    current: threshold('The vehicle\'s reading now: its odometer (km, to 0.1) or engine hours (to 0.01) as GET /vehicles/{id}/accumulators reports them, or today (UTC); null before the vehicle has one').nullable(),
    remaining: z.number().nullable().openapi({ description: 'What is left before `nextDue`, in `unit` (negative once past it); null without a reading', example: 995.8 }),
    status: z.enum(MAINTENANCE_STATUSES).openapi({ description: '`overdue` at `nextDue` + `tolerance` or past it, `due` at `nextDue` or past it, `dueSoon` within the window before it, `ok` otherwise; `unknown` without a reading' }),
    lastService: z
      .object({
        performedOn: z.string().openapi({ format: 'date', example: '2026-01-15' }),
        odometerKm: z.number().nullable().openapi({ example: 120_000 }),
        engineHours: z.number().nullable().openapi({ example: 3_500 }),
      })
      .nullable()
      .openapi({ description: 'The service recorded last; null if none' }),
    createdAt: z.string().openapi({ format: 'date-time' }),
    updatedAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('MaintenanceItem');

export type MaintenanceItemView = z.infer<typeof MaintenanceItemSchema>;

export function maintenanceItemView(m: MaintenanceItem, within: DueSoonWindow, now = new Date()): MaintenanceItemView {
  const reading = currentReading(m.kind, m, now);
  return {
    id: m.id, vehicle: { id: m.imei, name: m.vehicleName }, name: m.name, kind: m.kind, unit: MAINTENANCE_UNITS[m.kind],
    interval: m.interval, tolerance: m.tolerance, nextDue: m.nextDue, current: reading, remaining: remaining(m, reading),
    status: maintenanceStatus(m, reading, within), lastService: m.lastService,
    createdAt: m.createdAt.toISOString(), updatedAt: m.updatedAt.toISOString(),
  };
}

export const MaintenanceServiceSchema = z
  .object({
    id: z.number().int().openapi({ example: 7 }),
    maintenanceId: z.number().int().openapi({ example: 31 }),
    performedOn: z.string().openapi({ format: 'date', example: '2026-05-02' }),
    odometerKm: z.number().nullable().openapi({ description: 'The odometer at the service, km', example: 130_212 }),
    engineHours: z.number().nullable().openapi({ description: 'The engine hours at the service', example: 3_620.5 }),
    note: z.string().nullable().openapi({ example: 'Synthetic 5W-30, filter replaced' }),
    cost: z.number().nullable().openapi({ description: 'In the account\'s currency, as given', example: 84.5 }),
    nextDue: threshold('The threshold this service set: its reading (or date) plus the interval'),
    recordedAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('MaintenanceService');

export function maintenanceServiceView(s: MaintenanceService): z.infer<typeof MaintenanceServiceSchema> {
  return {
    id: s.id, maintenanceId: s.itemId, performedOn: s.performedOn, odometerKm: s.odometerKm, engineHours: s.engineHours, note: s.note, cost: s.cost,
    nextDue: s.nextDue, recordedAt: s.createdAt.toISOString(),
  };
}
