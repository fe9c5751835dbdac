import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { createVehicleGroup, deleteVehicleGroup, updateVehicleGroup, vehicleGroup, vehicleGroups, type VehicleGroupRow } from '../../db/vehicle-groups.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';

const NOT_FOUND = 'Group not found';
const MAX_MEMBERS = 10_000;
const noNul = (s: string) => !s.includes('\u0000');
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const id = z.coerce
  .number()
  .int('id must be an integer')
  .min(1)
  .max(2_147_483_647)
  .openapi({ param: { name: 'id', in: 'path' }, description: 'The group\'s id', example: 3 });

const name = z
  .string()
  .trim()
  .min(1, 'name must not be empty')
  .max(200, 'name must be at most 200 characters')
  .refine(noNul, 'name must not contain NUL characters')
  .openapi({ description: 'Unique among the account\'s groups of the key\'s mode; trimmed, 1 to 200 characters', example: 'North depot' });
const vehicleIds = z
  .array(z.string().min(1).max(64).refine(noNul, 'vehicle ids must not contain NUL characters'))
  .max(MAX_MEMBERS)
  .openapi({ description: `IMEIs of the account's vehicles of the key's mode (the ids of GET /vehicles), at most ${MAX_MEMBERS}`, example: ['356307042441013'] });
const userIds = z
  .array(z.number().int().min(1).max(2_147_483_647))
  .max(MAX_MEMBERS)
  .openapi({ description: 'Users of the account granted the group: they see its vehicles', example: [4, 9] });

const GroupSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    vehicle_ids: z.array(z.string()).openapi({ description: 'Its vehicles, by IMEI' }),
    user_ids: z.array(z.number().int()).openapi({ description: 'Users granted the group' }),
    created_at: z.string().openapi({ example: '2026-03-01T08:00:00.000Z' }),
    updated_at: z.string().openapi({ example: '2026-03-02T09:30:00.000Z' }),
  })
  .openapi('VehicleGroup');

const CreateBody = z.object({ name, vehicle_ids: vehicleIds.optional(), user_ids: userIds.optional() }).strict().openapi('VehicleGroupCreate');
const PatchBody = z
  .object({
    name: name.optional(),
    vehicle_ids: vehicleIds.optional().openapi({ description: 'Replaces the group\'s vehicles' }),
    user_ids: userIds.optional().openapi({ description: 'Replaces the group\'s users' }),
  })
  .strict()
  .openapi('VehicleGroupUpdate');

const BAD_BODY = 'Invalid field, an unknown field, a vehicle not in the account and mode, or a user of another account';

const routes = {
  list: createRoute({
    method: 'get', path: '/groups', tags: ['Groups'], summary: 'The account\'s vehicle groups',
    description: 'The groups of the key\'s account and mode (groups are per mode, as vehicles are), ordered by name, with their vehicles and users.',
    middleware: [requirePermission('users:read')] as const,
    responses: { 200: { description: 'The groups', content: json(envelopeSchema(z.array(GroupSchema), 'VehicleGroupList')) }, ...errorResponses() },
  }),
  get: createRoute({
    method: 'get', path: '/groups/{id}', tags: ['Groups'], summary: 'One vehicle group',
    middleware: [requirePermission('users:read')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'The group', content: json(envelopeSchema(GroupSchema, 'VehicleGroupResponse')) },
      ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND]),
    },
  }),
  create: createRoute({
    method: 'post', path: '/groups', tags: ['Groups'], summary: 'Create a vehicle group',
    description: 'Its users see its vehicles everywhere (status, vehicles, history, events, reports, webhooks, commands, media, maintenance, the position feed), besides the vehicles granted to them directly. Audited as `vehicle_group.created`.',
    middleware: [requirePermission('users:write')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The group', content: json(envelopeSchema(GroupSchema, 'VehicleGroupCreated')) },
      ...errorResponses([400, BAD_BODY], [409, 'The account has a group of this name in the key\'s mode'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  patch: createRoute({
    method: 'patch', path: '/groups/{id}', tags: ['Groups'], summary: 'Rename a group, or replace its vehicles or users',
    description: 'Only the fields given change; `vehicle_ids` and `user_ids` replace the lists. The change shows in the next answer of every read. Audited as `vehicle_group.updated` with what was added and removed.',
    middleware: [requirePermission('users:write')] as const,
    request: { params: z.object({ id }), body: { content: json(PatchBody), required: true } },
    responses: {
      200: { description: 'The group', content: json(envelopeSchema(GroupSchema, 'VehicleGroupUpdated')) },
      ...errorResponses([400, BAD_BODY], [404, NOT_FOUND], [409, 'Another group has this name'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  remove: createRoute({
    method: 'delete', path: '/groups/{id}', tags: ['Groups'], summary: 'Delete a vehicle group',
    description: 'Its users no longer see its vehicles through it (direct grants and other groups stay). Audited as `vehicle_group.deleted`.',
    middleware: [requirePermission('users:write')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'Deleted', content: json(envelopeSchema(z.object({ id: z.number().int(), deleted: z.literal(true) }), 'VehicleGroupDeleted')) },
      ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND]),
    },
  }),
};

function groupView(row: VehicleGroupRow): z.infer<typeof GroupSchema> {
  return {
    id: row.id, name: row.name, vehicle_ids: row.vehicle_ids, user_ids: row.user_ids,
    created_at: new Date(row.created_at).toISOString(), updated_at: new Date(row.updated_at).toISOString(),
  };
}

/**
 * /groups: vehicle groups, under users:read and users:write as they decide who sees what (docs/api/groups.md).
 * Unlike /users, test-mode keys may write them: a group belongs to one account and mode and holds only
 * vehicles of its mode (createVehicleGroup and updateVehicleGroup refuse others), so granting a user a
 * test group widens only what that user sees in test mode, never in live mode.
 */
export function groupRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();

  app.openapi(routes.list, async (c) => c.json(envelope((await vehicleGroups(db, c.get('principal').scope)).map(groupView)), 200));

  app.openapi(routes.get, async (c) => {
    const row = await vehicleGroup(db, c.get('principal').scope, c.req.valid('param').id);
    if (!row) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(groupView(row)), 200);
  });

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid('json');
    const row = await createVehicleGroup(db, c.get('principal').scope, auditActor(c), { name: body.name, vehicleIds: body.vehicle_ids, userIds: body.user_ids });
    return c.json(envelope(groupView(row)), 201);
  });

  app.openapi(routes.patch, async (c) => {
    const body = c.req.valid('json');
    const row = await updateVehicleGroup(db, c.get('principal').scope, auditActor(c), c.req.valid('param').id, {
      name: body.name, vehicleIds: body.vehicle_ids, userIds: body.user_ids,
    });
    if (!row) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(groupView(row)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const groupId = c.req.valid('param').id;
    if (!(await deleteVehicleGroup(db, c.get('principal').scope, auditActor(c), groupId))) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope({ id: groupId, deleted: true as const }), 200);
  });

  return app;
}
