/**
 * Every file of the corpus (docs/vectors/) is valid against
 * docs/vectors/schema.json (JSON Schema 2020-12, checked with ajv), and
 * against exactly the branch titled with its own file name.
 */
import { readdirSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { VECTORS, loadVectors } from './corpus.js';

interface Schema {
  $defs: Record<string, unknown>;
  oneOf: { title: string }[];
}
const schema = loadVectors<Schema>('schema.json');
const files = readdirSync(VECTORS).filter((f) => f.endsWith('.json') && f !== 'schema.json').sort();
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
/** The schema of one branch, with the shared definitions. */
const branch = (title: string) => ajv.compile({ $defs: schema.$defs, ...schema.oneOf.find((b) => b.title === title)!, $id: `branch:${title}` });

describe('docs/vectors/schema.json (ajv, draft 2020-12)', () => {
  it('has a branch for every corpus file, and no branch without a file', () => {
    expect(schema.oneOf.map((b) => b.title).sort()).toEqual(files);
  });

  it.each(files)('%s is valid against the schema, and against its own branch', (file) => {
    const doc = loadVectors<Record<string, unknown>>(file);
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
    const own = branch(file);
    expect(own(doc) ? [] : own.errors).toEqual([]);
  });

  it('refuses a mutated file (an unknown ruling code, a missing expectation, an extra member)', () => {
    const rulings = loadVectors<{ cases: Record<string, unknown>[] }>('rulings.json');
    expect(validate({ ...rulings, cases: [{ ...rulings.cases[0], code: 'no_such_code' }] })).toBe(false);
    const intents = loadVectors<{ validations: Record<string, unknown>[] }>('intents.json');
    const { expect: _e, ...noExpect } = intents.validations[0]!;
    expect(validate({ ...intents, validations: [noExpect] })).toBe(false);
    expect(validate({ ...loadVectors<object>('cosignatures.json'), extra: 1 })).toBe(false);
  });
});
