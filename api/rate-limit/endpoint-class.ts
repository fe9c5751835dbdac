/**
 * The specification states two limits: 50 requests per 10 s on its detailed endpoints, 600 per minute
 * on the overview ones (everything in its section B, and what this API adds). Each request counts
 * against the limit of its own class only.
 */
export type EndpointClass = 'detailed' | 'overview';

const DETAILED: Array<[method: string, path: RegExp]> = [
  ['GET', /^\/devices\/status$/],
  ['GET', /^\/devices\/[^/]+\/status$/],
  ['GET', /^\/geofences$/],
  ['GET', /^\/reports\/geofences$/],
  ['GET', /^\/travels$/],
  ['POST', /^\/travels$/],
  ['GET', /^\/travels\/[^/]+$/],
  ['DELETE', /^\/travels\/[^/]+$/],
];

/** The class of a request by its method and its path below the API prefix (`/travels/12`). */
export function endpointClass(method: string, path: string): EndpointClass {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return DETAILED.some(([m, p]) => m === method && p.test(trimmed)) ? 'detailed' : 'overview';
}
