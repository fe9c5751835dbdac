import { createMiddleware } from 'hono/factory';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { grants, type Permission } from './permissions.ts';

export function requirePermission(permission: Permission) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!grants(c.get('principal').permissions, permission)) {
      throw new ApiError(403, `This API key lacks the ${permission} permission`);
    }
    await next();
  });
}
