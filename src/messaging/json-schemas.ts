import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * zod schemas as JSON Schema (draft 07, the base of AsyncAPI 3.0's Schema Object) with one shared
 * set of named components: every schema named with `.meta({ id })` becomes one component, referenced
 * from wherever it is used, so a document states a shape once however many messages carry it.
 *
 * What goes over the wire is a request as its sender writes it (the schema's input: defaults may be
 * left out) and a reply, event or job as the platform wrote it (the output). A named schema whose
 * input and output differ gets a second component, `<id>Input` (the convention of the OpenAPI
 * document). The output of a transform cannot be expressed in JSON Schema: it is described by the
 * transform's input, which is what the schema accepts again when a reply is parsed at the edge.
 */
export type JsonSchema = Record<string, unknown>;
export type Io = 'input' | 'output';

const DefinitionRef = /^#\/definitions\/(.+)$/;
const NoNames = z.registry<{ id?: string }>();

export interface SchemaSet {
  /** The JSON Schema of a payload; its refs point into the components once `components()` ran. */
  add(schema: z.ZodType, io: Io): JsonSchema;
  /** Names every component and points the refs of every added schema at `<prefix><name>`. */
  components(prefix: string): Record<string, JsonSchema>;
}

export function createSchemaSet(): SchemaSet {
  const added: Array<{ root: JsonSchema; io: Io }> = [];
  const definitions: Record<Io, Map<string, JsonSchema>> = { input: new Map(), output: new Map() };

  const convert = (schema: z.ZodType, io: Io): JsonSchema =>
    z.toJSONSchema(schema, {
      target: 'draft-07',
      io,
      unrepresentable: ({ zodSchema }) =>
        zodSchema._zod.def.type === 'transform'
          ? 'any' // described by the pipe around it (override below)
          : zodSchema._zod.def.type === 'custom'
            ? { description: 'Bytes, not JSON: see the content type of the message' }
            : { description: `Not representable in JSON Schema (${zodSchema._zod.def.type})` },
      override: ({ zodSchema, jsonSchema }) => {
        const def = zodSchema._zod.def;
        if (io === 'output' && def.type === 'pipe' && def.out._zod.def.type === 'transform') {
          const accepted = z.toJSONSchema(def.in, { target: 'draft-07', io: 'input', metadata: NoNames, unrepresentable: 'any' });
          delete accepted.$schema;
          for (const [key, value] of Object.entries(accepted)) if (!(key in jsonSchema)) (jsonSchema as JsonSchema)[key] = value;
        }
      },
    }) as JsonSchema;

  return {
    add(schema, io) {
      const root = convert(schema, io);
      delete root.$schema;
      const defs = nameGenerated((root.definitions ?? {}) as Record<string, JsonSchema>, root);
      delete root.definitions;
      for (const [id, definition] of Object.entries(defs)) {
        const known = definitions[io].get(id);
        if (known && JSON.stringify(known) !== JSON.stringify(definition)) {
          throw new Error(`two different schemas are named ${id} (.meta({ id })): give each its own id`);
        }
        definitions[io].set(id, definition);
      }
      added.push({ root, io });
      return root;
    },

    components(prefix) {
      const inputName = inputNames(definitions);
      const nameOf = (io: Io, id: string) => (io === 'output' ? id : (inputName.get(id) ?? id));
      const point = (schema: JsonSchema, io: Io) =>
        walk(schema, (node) => {
          const match = typeof node.$ref === 'string' ? DefinitionRef.exec(node.$ref) : null;
          if (match) node.$ref = `${prefix}${nameOf(io, match[1]!)}`;
        });
      const components: Record<string, JsonSchema> = {};
      for (const io of ['output', 'input'] as const) {
        for (const [id, definition] of definitions[io]) {
          const copy = structuredClone(definition);
          point(copy, io);
          components[nameOf(io, id)] = copy;
        }
      }
      for (const { root, io } of added) point(root, io);
      return Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b)));
    },
  };
}

/**
 * The component name of each named schema's input form: its id when the input is the output (and
 * so are the inputs of every schema it refers to), else `<id>Input`.
 */
function inputNames(definitions: Record<Io, Map<string, JsonSchema>>): Map<string, string> {
  const differs = new Set<string>();
  for (const [id, input] of definitions.input) {
    const output = definitions.output.get(id);
    if (output && JSON.stringify(output) !== JSON.stringify(input)) differs.add(id);
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const [id, input] of definitions.input) {
      if (differs.has(id)) continue;
      if (refsOf(input).some((ref) => differs.has(ref))) {
        differs.add(id);
        grew = true;
      }
    }
  }
  const names = new Map<string, string>();
  for (const id of definitions.input.keys()) {
    const name = differs.has(id) ? `${id}Input` : id;
    if (differs.has(id) && (definitions.output.has(name) || definitions.input.has(name))) {
      throw new Error(`the input form of ${id} would be named ${name}, which names another schema`);
    }
    names.set(id, name);
  }
  return names;
}

/**
 * zod names a recursive schema without an id `__schema<n>`, counting per conversion: it is named by
 * its content instead, so the same shape in two payloads is one component and two shapes never share
 * a name.
 */
function nameGenerated(defs: Record<string, JsonSchema>, root: JsonSchema): Record<string, JsonSchema> {
  const renamed: Record<string, string> = {};
  for (const [key, definition] of Object.entries(defs)) {
    if (!/^__schema\d+$/.test(key)) continue;
    const text = JSON.stringify(definition).replaceAll(`"#/definitions/${key}"`, '"#"');
    renamed[key] = `Schema${createHash('sha256').update(text).digest('hex').slice(0, 8)}`;
  }
  if (!Object.keys(renamed).length) return defs;
  const point = (node: JsonSchema) => {
    const match = typeof node.$ref === 'string' ? DefinitionRef.exec(node.$ref) : null;
    const name = match ? renamed[match[1]!] : undefined;
    if (name) node.$ref = `#/definitions/${name}`;
  };
  walk(root, point);
  const named: Record<string, JsonSchema> = {};
  for (const [key, definition] of Object.entries(defs)) {
    walk(definition, point);
    named[renamed[key] ?? key] = definition;
  }
  return named;
}

function refsOf(schema: JsonSchema): string[] {
  const refs: string[] = [];
  walk(schema, (node) => {
    const match = typeof node.$ref === 'string' ? DefinitionRef.exec(node.$ref) : null;
    if (match) refs.push(match[1]!);
  });
  return refs;
}

function walk(value: unknown, visit: (node: JsonSchema) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, visit);
  } else if (value && typeof value === 'object') {
    visit(value as JsonSchema);
    for (const child of Object.values(value)) walk(child, visit);
  }
}
