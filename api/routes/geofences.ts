import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { geofencesOfAccount } from '../../db/geofences.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';
import { GeofenceSchema, geofenceView } from '../views/geofence-view.ts';

const listGeofences = createRoute({
  method: 'get',
  path: '/geofences',
  tags: ['Geofences'],
  summary: 'Every geofence of the account, alphabetically by name',
  description: 'Geofences belong to the account: every user of the account, with a live or a test key, sees the same list.',
  middleware: [requirePermission('geofences:read')] as const,
  responses: {
    200: { description: 'Geofences', content: { 'application/json': { schema: envelopeSchema(z.array(GeofenceSchema), 'GeofenceList') } } },
    ...errorResponses(),
  },
});

export function geofenceRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(listGeofences, async (c) => {
    const rows = await geofencesOfAccount(db, c.get('principal').scope.accountId);
    return c.json(envelope(rows.map(geofenceView)), 200);
  });
  return app;
}
