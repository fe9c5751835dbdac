import type { AccessScope } from '../db/access-scope.ts';

/** Who is calling: resolved from the API key by the authentication middleware. */
export interface Principal {
  keyId: number;
  /** Identifies the key to the rate limiter without exposing it. */
  keyHash: string;
  scope: AccessScope;
  timezone: string;
  permissions: string[];
}

export interface AppEnv {
  Variables: { principal: Principal };
}
