import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { visibleDeviceState } from '../../db/devices.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';
import { DeviceStatusSchema, deviceStatusView } from '../views/device-status-view.ts';

const listStatus = createRoute({
  method: 'get',
  path: '/devices/status',
  tags: ['Devices'],
  summary: 'Latest status of every device the key may see',
  description: [
    'Sorted by vehicle name. A device that has never reported has null position fields and status Inactive.',
    'Fleet-wide, so read at most every 400 ms per caller and shared by every request meanwhile: the answer is never older than one second, and `timestamp` says when it was read. A write through the API shows in the next answer.',
  ].join('\n\n'),
  middleware: [requirePermission('devices:read')] as const,
  responses: {
    200: { description: 'Device statuses', content: { 'application/json': { schema: envelopeSchema(z.array(DeviceStatusSchema), 'DeviceStatusList') } } },
    ...errorResponses(),
  },
});

const oneStatus = createRoute({
  method: 'get',
  path: '/devices/{deviceId}/status',
  tags: ['Devices'],
  summary: 'Status of one device',
  middleware: [requirePermission('devices:read')] as const,
  request: {
    params: z.object({ deviceId: z.string().min(1).max(64).openapi({ description: 'IMEI', example: '356307042441013' }) }),
  },
  responses: {
    200: { description: 'Device status', content: { 'application/json': { schema: envelopeSchema(DeviceStatusSchema, 'DeviceStatusResponse') } } },
    ...errorResponses([400, 'Invalid device id: longer than 64 characters, or holding a NUL'], [404, 'Device not found or no access']),
  },
});

export function deviceRoutes({ staleDb, config, latestState }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(listStatus, async (c) => {
    const { json } = await latestState.statusList(c.get('principal').scope);
    return c.body(json as Uint8Array<ArrayBuffer>, 200, { 'Content-Type': 'application/json' }) as never;
  });
  app.openapi(oneStatus, async (c) => {
    const row = await visibleDeviceState(staleDb, c.get('principal').scope, c.req.valid('param').deviceId);
    if (!row) throw new ApiError(404, 'Device not found or no access');
    return c.json(envelope(deviceStatusView(row, new Date(), config.deviceStatus)), 200);
  });
  return app;
}
