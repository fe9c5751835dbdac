import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { operationId, type OpenApiDocument } from './openapi-operations.ts';

// ajv-formats is CommonJS: under NodeNext its callable export is `default` of the namespace.
const addFormats = addFormatsModule.default;

/** Base URI the document is registered under; its `#/components/...` references resolve against it. */
const DOCUMENT_ID = 'https://fleetcore.test/openapi.json';

/** Annotations the OpenAPI 3.1 dialect adds to JSON Schema 2020-12; they never constrain an instance. */
const OPENAPI_ANNOTATIONS = ['example', 'discriminator', 'xml', 'externalDocs'];

/** Number formats OpenAPI defines on top of JSON Schema's. */
const INT32 = 2 ** 31;
const OPENAPI_FORMATS = {
  int32: { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -INT32 && n < INT32 },
  int64: { type: 'number', validate: (n: number) => Number.isInteger(n) },
  float: { type: 'number', validate: () => true },
  double: { type: 'number', validate: () => true },
  password: { type: 'string', validate: () => true },
  // A file's bytes (GET /media/{id}): any content; the answer's type and length are checked by the cases.
  binary: { type: 'string', validate: () => true },
} as const;

/** A JSON pointer segment as it must appear in a URI fragment: `/travels/{id}` → `~1travels~1%7Bid%7D`. */
const segment = (name: string) => encodeURIComponent(name.replace(/~/g, '~0').replace(/\//g, '~1'));

const mediaTypeOf = (contentType: string | null) => contentType?.split(';')[0]!.trim().toLowerCase() ?? '';

function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword} (${e.schemaPath} ${JSON.stringify(e.params)})`);
}

export interface Answer {
  method: string;
  path: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

/**
 * Checks real answers against the schemas an OpenAPI 3.1 document declares, with Ajv's JSON Schema
 * 2020-12 validator in strict mode: an unknown keyword, an unknown format or a schema the meta-schema
 * refuses is an error, not something skipped.
 */
export function openApiResponseValidator(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  for (const [name, format] of Object.entries(OPENAPI_FORMATS)) ajv.addFormat(name, format);
  // The document's own containers, so Ajv follows JSON pointers into them without reading them as keywords.
  ajv.addVocabulary([...OPENAPI_ANNOTATIONS, 'paths', 'components']);
  ajv.addSchema({ $id: DOCUMENT_ID, paths: doc.paths ?? {}, components: doc.components ?? {} });

  const compiled = new Map<string, ValidateFunction>();
  const compile = (pointer: string) => {
    let validate = compiled.get(pointer);
    if (!validate) compiled.set(pointer, (validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` })));
    return validate;
  };

  /** Every schema the document holds (components, parameters, bodies, responses), as JSON pointers. */
  function schemaPointers(): string[] {
    const pointers = Object.keys(doc.components?.schemas ?? {}).map((name) => `/components/schemas/${segment(name)}`);
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const [method, raw] of Object.entries(item)) {
        const operation = raw as { parameters?: Array<{ schema?: unknown }>; requestBody?: { content?: object }; responses?: Record<string, { content?: object }> };
        const at = `/paths/${segment(path)}/${segment(method)}`;
        operation.parameters?.forEach((p, i) => p.schema && pointers.push(`${at}/parameters/${i}/schema`));
        for (const mediaType of Object.keys(operation.requestBody?.content ?? {})) pointers.push(`${at}/requestBody/content/${segment(mediaType)}/schema`);
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          for (const mediaType of Object.keys(response.content ?? {})) pointers.push(`${at}/responses/${segment(status)}/content/${segment(mediaType)}/schema`);
        }
      }
    }
    return pointers;
  }

  return {
    /** Schemas that are not valid JSON Schema 2020-12 or that strict mode refuses, one line each. */
    schemaProblems(): string[] {
      const problems: string[] = [];
      for (const pointer of schemaPointers()) {
        try {
          compile(pointer);
        } catch (error) {
          problems.push(`#${decodeURIComponent(pointer)}: ${(error as Error).message}`);
        }
      }
      return problems;
    },

    /** Why the answer does not conform to the document; empty when it does. */
    problems(answer: Answer): string[] {
      const id = operationId(answer.method, answer.path);
      const operation = doc.paths?.[answer.path]?.[answer.method.toLowerCase()] as { responses?: Record<string, { content?: Record<string, unknown> }> } | undefined;
      if (!operation) return [`${id} is not in the document`];
      const responses = operation.responses ?? {};
      const status = String(answer.status);
      const key = [status, `${status[0]}XX`, 'default'].find((k) => k in responses);
      if (!key) return [`${id} answered ${status}, which the document does not list (it lists ${Object.keys(responses).join(', ')})`];
      const content = responses[key]!.content ?? {};
      const mediaType = mediaTypeOf(answer.contentType);
      if (Object.keys(content).length === 0) {
        return answer.body === undefined ? [] : [`${id} ${status} documents no content, but the answer has a ${mediaType || 'typeless'} body`];
      }
      const documented = Object.keys(content).find((type) => type.toLowerCase() === mediaType);
      if (!documented) return [`${id} ${status} answered ${mediaType || 'no content type'}; the document lists ${Object.keys(content).join(', ')}`];
      const validate = compile(`/paths/${segment(answer.path)}/${segment(answer.method.toLowerCase())}/responses/${segment(key)}/content/${segment(documented)}/schema`);
      return validate(answer.body) ? [] : describeErrors(validate.errors).map((line) => `${id} ${status}: ${line}`);
    },
  };
}
