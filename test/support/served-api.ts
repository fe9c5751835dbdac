/**
 * Calls `/api/v1` of a running server over HTTP with a key, reading the JSON answer. The URL and key
 * are read at each call, so a test file can make the caller before its server starts.
 */
export function servedApi(url: () => string, key: () => string) {
  return async (path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${url()}/api/v1${path}`, {
      method: init.method ?? 'GET',
      headers: { Authorization: `Bearer ${key()}`, ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}
