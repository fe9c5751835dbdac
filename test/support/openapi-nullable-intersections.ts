import type { OpenApiDocument } from './openapi-operations.ts';

type Schema = Record<string, unknown> | boolean;

const typesOf = (schema: Record<string, unknown>) =>
  typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as string[]) : undefined;

/**
 * Places where a schema says null but no null can pass: an `allOf` with a member whose `type` lists
 * `null` beside a member that refuses null. It is how a generator renders `.nullable()` on a referenced
 * schema (`allOf: [{$ref}, {type: [object, null]}]`), and a validator then refuses every null answer.
 */
export function nullableIntersections(doc: OpenApiDocument): string[] {
  const resolve = (schema: Schema, seen = new Set<string>()): Schema => {
    if (typeof schema !== 'object' || typeof schema.$ref !== 'string') return schema;
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : (doc.components?.schemas?.[decodeURIComponent(name)] as Schema | undefined);
    // A reference out of the components, or a cycle: say nothing about it rather than guess.
    if (target === undefined || seen.has(schema.$ref)) return true;
    return resolve(target, new Set(seen).add(schema.$ref));
  };

  /** Whether some null passes the schema, as far as its type, const, enum and combinators tell. */
  const admitsNull = (raw: Schema): boolean => {
    const schema = resolve(raw);
    if (typeof schema === 'boolean') return schema;
    const types = typesOf(schema);
    if (types && !types.includes('null')) return false;
    if ('const' in schema && schema.const !== null) return false;
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) return false;
    if (Array.isArray(schema.allOf) && !schema.allOf.every((s) => admitsNull(s as Schema))) return false;
    for (const union of ['anyOf', 'oneOf'] as const) {
      if (Array.isArray(schema[union]) && !schema[union].some((s) => admitsNull(s as Schema))) return false;
    }
    return true;
  };

  const found: string[] = [];
  const walk = (node: unknown, pointer: string) => {
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${pointer}/${i}`));
    if (typeof node !== 'object' || node === null) return;
    const allOf = (node as { allOf?: unknown }).allOf;
    if (Array.isArray(allOf)) {
      const saysNull = allOf.some((s) => typeof s === 'object' && s !== null && typesOf(s)?.includes('null'));
      if (saysNull && !allOf.every((s) => admitsNull(s as Schema))) found.push(`${pointer}/allOf`);
    }
    for (const [key, value] of Object.entries(node)) walk(value, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(doc, '#');
  return found;
}
