import { z } from '@hono/zod-openapi';
import type { VehicleAccumulators } from '../../db/vehicle-accumulators.ts';

const km = (description: string) => z.number().nullable().openapi({ description: `${description}, to 0.1 km`, example: 120_431.7 });
const hours = (description: string) => z.number().nullable().openapi({ description: `${description}, to 0.01 h`, example: 3_512.25 });
const setAt = z.string().nullable().openapi({ format: 'date-time', description: 'When it was set; null: never' });

export const VehicleAccumulatorsSchema = z
  .object({
    deviceId: z.string().openapi({ description: 'IMEI', example: '356307042441013' }),
    odometerKm: km('What GET /devices/status shows: the tracker\'s own odometer when its latest fix reports one above 0, else `serverOdometerKm`'),
    odometerSource: z.enum(['tracker', 'server']).nullable().openapi({ description: 'Which odometer `odometerKm` is; null while there is neither' }),
    serverOdometerKm: km('The server\'s odometer: the baseline plus the distance counted since it was set (or, without one, since counting began); null before the first fix'),
    engineHours: hours('Hours with the ignition on: the baseline plus the time counted since it was set (or since counting began); null before the first fix'),
    baseline: z
      .object({
        odometerKm: km('The odometer the installer set'),
        odometerSetAt: setAt,
        engineHours: hours('The engine hours the installer set'),
        engineHoursSetAt: setAt,
      })
      .openapi({ description: 'What was last set through PUT; each figure null until set' }),
  })
  .openapi('VehicleAccumulators');

export type VehicleAccumulatorsView = z.infer<typeof VehicleAccumulatorsSchema>;

const tenths = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
const hundredths = (v: number | null) => (v === null ? null : Math.round(v * 100) / 100);

export function vehicleAccumulatorsView(a: VehicleAccumulators): VehicleAccumulatorsView {
  const source = a.trackerOdometerKm !== null ? 'tracker' : a.serverOdometerKm !== null ? 'server' : null;
  return {
    deviceId: a.imei,
    odometerKm: tenths(a.trackerOdometerKm ?? a.serverOdometerKm),
    odometerSource: source,
    serverOdometerKm: tenths(a.serverOdometerKm),
    engineHours: hundredths(a.engineHours),
    baseline: {
      odometerKm: a.odometerBaselineKm,
      odometerSetAt: a.odometerSetAt?.toISOString() ?? null,
      engineHours: a.engineBaselineHours,
      engineHoursSetAt: a.engineSetAt?.toISOString() ?? null,
    },
  };
}
