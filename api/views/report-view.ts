import { z } from '@hono/zod-openapi';

export const REPORT_SECTIONS = ['summary', 'events', 'visits'] as const;

const localTime = (example: string) => z.string().openapi({ description: 'dd/MM/yyyy HH:mm in the user timezone', example });

export const GeofenceReportSchema = z
  .object({
    range: z.object({ from: localTime('01/05/2024 00:00'), to: localTime('01/05/2024 23:59') }),
    deviceCount: z.number().int(),
    geofenceCount: z.number().int().openapi({ description: 'Geofences filtered by; 0 means all' }),
    included: z.array(z.enum(REPORT_SECTIONS)),
    summary: z
      .array(
        z.object({
          deviceId: z.string(),
          deviceName: z.string(),
          geofenceId: z.number().int(),
          geofenceName: z.string(),
          timesCrossed: z.number().int().openapi({ description: 'Enter plus exit events in the range' }),
          firstCross: localTime('01/05/2024 08:12'),
          lastCross: localTime('01/05/2024 17:40'),
        }),
      )
      .optional(),
    events: z
      .array(
        z.object({
          deviceId: z.string(),
          deviceName: z.string(),
          geofenceName: z.string(),
          eventType: z.enum(['Entrada', 'Salida']),
          dateTime: localTime('01/05/2024 08:12'),
        }),
      )
      .optional(),
    visits: z
      .array(
        z.object({
          deviceId: z.string(),
          deviceName: z.string(),
          geofenceName: z.string(),
          entryTime: localTime('01/05/2024 08:12'),
          exitTime: localTime('01/05/2024 09:02').nullable().openapi({ description: 'null while the vehicle is still inside' }),
          duration: z.string().openapi({ description: '<h>h <m>m; for an open visit, the time inside so far', example: '0h 50m' }),
        }),
      )
      .optional(),
  })
  .openapi('GeofenceReport');
