import { createMiddleware } from 'hono/factory';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { grants, type Permission } from '../../domain/access/permissions.ts';

/** The permission a route's middleware demands, where the OpenAPI document reads it back (see permissionOf). */
const REQUIRED = Symbol('required permission');

export function requirePermission(permission: Permission) {
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    if (!grants(c.get('principal').permissions, permission)) {
      throw new ApiError(403, `This API key lacks the ${permission} permission`);
    }
    await next();
  });
  return Object.assign(middleware, { [REQUIRED]: permission });
}

/** The permission a route's middleware list demands, if any. */
export function permissionOf(middleware: unknown): Permission | undefined {
  const list = Array.isArray(middleware) ? middleware : [middleware];
  for (const m of list) {
    const permission = (m as { [REQUIRED]?: Permission } | undefined)?.[REQUIRED];
    if (permission) return permission;
  }
  return undefined;
}
