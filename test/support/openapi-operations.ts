/** The parts of an OpenAPI 3.1 document the conformance test reads; everything else stays `unknown`. */
export interface OpenApiDocument {
  openapi: string;
  paths?: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown> };
  [field: string]: unknown;
}

export interface DocumentedOperation {
  /** `GET /travels/{id}`: the method in capitals and the path as the document writes it. */
  id: string;
  method: string;
  path: string;
  /** Response keys as written: `200`, `404`, and possibly ranges (`4XX`) or `default`. */
  statuses: string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export const operationId = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/** Every operation of the document's `paths`, in document order. */
export function documentedOperations(doc: OpenApiDocument): DocumentedOperation[] {
  const operations: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method] as { responses?: Record<string, unknown> } | undefined;
      if (!operation) continue;
      operations.push({ id: operationId(method, path), method, path, statuses: Object.keys(operation.responses ?? {}) });
    }
  }
  return operations;
}
