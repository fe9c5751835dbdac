import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { accountUser, accountUsers, addAccountUser, changeAccountUser, changeOwnProfile, removeAccountUser } from '../../db/account-users.ts';
import type { User } from '../../db/schema.ts';
import { groupsOfUsers } from '../../db/vehicle-groups.ts';
import { ROLES } from '../../domain/access/roles.ts';
import { DomainError } from '../../domain/domain-error.ts';
import type { AppEnv } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { requireLiveMode } from '../auth/require-live-mode.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isValidTimeZone } from '../../domain/time/zoned-time.ts';

const MAX_SERIAL_ID = 2_147_483_647;
const TAG = ['Users'];
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const noNul = (s: string) => !s.includes('\u0000');

const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 12 });
const role = z.enum(ROLES).openapi({ description: 'owner, admin, dispatcher or viewer: what the user may do (docs/api/access.md, "Roles")', example: 'dispatcher' });
const email = z
  .string().trim().max(254)
  .refine((s) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s), 'email must be an email address such as ana@example.com')
  .openapi({ description: 'Unique among all users; stored lower case', example: 'ana@example.com' });
const name = z.string().trim().max(200).refine(noNul, 'name must not contain NUL characters').nullable()
  .openapi({ description: 'Up to 200 characters; null or empty: none', example: 'Ana López' });
const timezone = z.string().max(100).refine(isValidTimeZone, 'timezone must be an IANA time zone such as America/Mexico_City')
  .openapi({ description: 'IANA time zone the user\'s reports and local times are in', example: 'America/Mexico_City' });

const UserSchema = z.object({
  id: z.number().int().openapi({ example: 12 }),
  name: z.string().nullable().openapi({ example: 'Ana López' }),
  email: z.string().openapi({ example: 'ana@example.com' }),
  timezone: z.string().openapi({ example: 'America/Mexico_City' }),
  role: z.enum(ROLES).openapi({ example: 'dispatcher' }),
  createdAt: z.string().openapi({ format: 'date-time', example: '2024-05-01T14:30:00.000Z' }),
  groups: z.array(z.object({ id: z.number().int(), name: z.string() }))
    .openapi({ description: 'The vehicle groups granted to the user, of the caller\'s mode (groups are per mode), by name', example: [{ id: 3, name: 'North depot' }] }),
}).openapi('User');

const CreateBody = z.object({
  email,
  name: name.optional(),
  timezone,
  role: role.optional().openapi({ description: 'Default viewer; no higher than the caller\'s own role, and owner only by an owner' }),
}).strict().openapi('UserCreate');
const PatchBody = z.object({ email: email.optional(), name: name.optional(), timezone: timezone.optional(), role: role.optional() }).strict().openapi('UserUpdate');
const ProfileBody = z.object({ name: name.optional(), timezone: timezone.optional() }).strict().openapi('UserProfileUpdate');

type UserGroups = Map<number, { id: number; name: string }[]>;

function userView(u: User, groups: UserGroups) {
  return { id: u.id, name: u.name, email: u.email, timezone: u.timezone, role: u.role, createdAt: u.created_at.toISOString(), groups: groups.get(u.id) ?? [] };
}

/**
 * Users are the account's, the same in both modes: a test-mode credential reads them (users:read) but
 * neither adds, changes nor removes any, its own profile included, since that would change what the
 * account's live keys go by. Groups are per account and mode and hold only vehicles of their mode, so
 * a test key granting a user a test group widens only what that user sees in test mode: /groups keeps
 * taking test keys.
 */
const LIVE_ONLY = requireLiveMode('Users are the account\'s, in both modes: a test-mode key or token cannot add, change or remove them; use a live key');

const blankToNull = (s: string | null | undefined) => (s === undefined ? undefined : s === null || s === '' ? null : s);

/** The answers of GET /users/me: any valid credential may call it, so no 403. */
function selfErrorResponses() {
  const responses = errorResponses();
  delete responses[403];
  return responses;
}

const ROLE_RULES = 'A test-mode credential changes no user (403): users are the account\'s, in both modes. Nobody raises their own role, only an owner makes, changes or removes an owner, and nobody gives a role above their own (403); the account\'s last owner can be neither demoted nor removed (409).';

const routes = {
  me: createRoute({
    method: 'get', path: '/users/me', tags: TAG, summary: 'The calling credential\'s user: name, email, timezone and role',
    description: 'Any valid credential may read its own user; no users:read needed.',
    responses: { 200: { description: 'The user', content: json(envelopeSchema(UserSchema, 'UserMe')) }, ...selfErrorResponses() },
  }),
  patchMe: createRoute({
    method: 'patch', path: '/users/me', tags: TAG, summary: 'Change one\'s own name or timezone',
    description: 'Any valid live-mode credential may change its own user\'s name and timezone; no users:write needed (a test-mode one answers 403). Email and role are changed through PATCH /users/{id}.',
    middleware: [LIVE_ONLY] as const,
    request: { body: { content: json(ProfileBody), required: true } },
    responses: {
      200: { description: 'The user', content: json(envelopeSchema(UserSchema, 'UserMeUpdated')) },
      ...errorResponses([400, 'Invalid field (a timezone that is not an IANA zone)'], [403, 'A test-mode credential: users are the account\'s, in both modes'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  list: createRoute({
    method: 'get', path: '/users', tags: TAG, summary: 'The account\'s users with their roles, oldest first',
    middleware: [requirePermission('users:read')] as const,
    responses: { 200: { description: 'Every user of the account', content: json(envelopeSchema(z.array(UserSchema), 'UserList')) }, ...errorResponses() },
  }),
  get: createRoute({
    method: 'get', path: '/users/{id}', tags: TAG, summary: 'One user of the account',
    middleware: [requirePermission('users:read')] as const,
    request: { params: z.object({ id }) },
    responses: { 200: { description: 'The user', content: json(envelopeSchema(UserSchema, 'UserDetail')) }, ...errorResponses([400, 'Invalid id'], [404, 'No such user in the account']) },
  }),
  create: createRoute({
    method: 'post', path: '/users', tags: TAG, summary: 'Add a user to the account',
    description: `The user gets no credential: the operator or the user mints one. ${ROLE_RULES}`,
    middleware: [requirePermission('users:write'), LIVE_ONLY] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The user', content: json(envelopeSchema(UserSchema, 'UserCreated')) },
      ...errorResponses([400, 'Invalid field'], [403, 'The caller lacks users:write, is of test mode, or the role is beyond what the caller may give'], [409, 'A user with this email exists'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  patch: createRoute({
    method: 'patch', path: '/users/{id}', tags: TAG, summary: 'Change a user\'s name, email, timezone or role',
    description: `Only the fields given change. A lowered role holds at once on the user's existing keys and tokens, which never do more than the role allows. ${ROLE_RULES}`,
    middleware: [requirePermission('users:write'), LIVE_ONLY] as const,
    request: { params: z.object({ id }), body: { content: json(PatchBody), required: true } },
    responses: {
      200: { description: 'The user', content: json(envelopeSchema(UserSchema, 'UserUpdated')) },
      ...errorResponses(
        [400, 'Invalid field'], [403, 'The caller lacks users:write, is of test mode, or the change breaks a role rule'], [404, 'No such user in the account'],
        [409, 'Another user has this email, or the user is the account\'s last owner'], [413, 'Body too large'], [415, 'Not JSON'],
      ),
    },
  }),
  remove: createRoute({
    method: 'delete', path: '/users/{id}', tags: TAG, summary: 'Remove a user from the account',
    description: 'The user\'s API keys, OAuth clients and access tokens are revoked and their webhooks deleted, at once. The audit log keeps naming them. Only an owner removes an owner; the last owner cannot be removed (409).',
    middleware: [requirePermission('users:write'), LIVE_ONLY] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'The user removed', content: json(envelopeSchema(UserSchema, 'UserRemoved')) },
      ...errorResponses([400, 'Invalid id'], [403, 'The caller lacks users:write, is of test mode, or only an owner removes an owner'], [404, 'No such user in the account'], [409, 'The user is the account\'s last owner']),
    },
  }),
};

/** The account's users and their roles (`users:read`, `users:write`), and every caller's own profile. */
export function userRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  const actor = (c: Parameters<typeof auditActor>[0]) => ({ ...auditActor(c), userId: c.get('principal').scope.userId });
  type Caller = Parameters<typeof auditActor>[0];
  /** The users as answered: each with its groups of the caller's mode. */
  const views = async (c: Caller, users: User[]) => {
    const groups = await groupsOfUsers(db, c.get('principal').scope, users.map((u) => u.id));
    return users.map((u) => userView(u, groups));
  };
  const view = async (c: Caller, user: User) => (await views(c, [user]))[0]!;

  app.openapi(routes.me, async (c) => {
    const { scope } = c.get('principal');
    const user = await accountUser(db, scope.accountId, scope.userId);
    if (!user) throw new DomainError('not_found', 'user not found');
    return c.json(envelope(await view(c, user)), 200);
  });

  app.openapi(routes.patchMe, async (c) => {
    const body = c.req.valid('json');
    const user = await changeOwnProfile(db, actor(c), { name: blankToNull(body.name), timezone: body.timezone });
    return c.json(envelope(await view(c, user)), 200);
  });

  app.openapi(routes.list, async (c) => {
    const users = await accountUsers(db, c.get('principal').scope.accountId);
    return c.json(envelope(await views(c, users)), 200);
  });

  app.openapi(routes.get, async (c) => {
    const user = await accountUser(db, c.get('principal').scope.accountId, c.req.valid('param').id);
    if (!user) throw new DomainError('not_found', 'user not found');
    return c.json(envelope(await view(c, user)), 200);
  });

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid('json');
    const user = await addAccountUser(db, actor(c), { email: body.email, name: blankToNull(body.name) ?? null, timezone: body.timezone, role: body.role ?? 'viewer' });
    return c.json(envelope(await view(c, user)), 201);
  });

  app.openapi(routes.patch, async (c) => {
    const body = c.req.valid('json');
    const user = await changeAccountUser(db, actor(c), c.req.valid('param').id, { ...body, name: blankToNull(body.name) });
    return c.json(envelope(await view(c, user)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const user = await removeAccountUser(db, actor(c), c.req.valid('param').id);
    return c.json(envelope(await view(c, user)), 200);
  });

  return app;
}
