import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import * as runtime from '../src/client/parsers.js';
import * as compiled from '../src/client/parsers-node.js';
import { KYB_STEP_TYPES } from '../src/schemas/kyb-values.js';
import { detailsPayload } from './helpers/fixtures.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The response schemas of a parsers module, by name. */
const responseSchemas = (parsers: typeof runtime): Record<keyof typeof VALID, z.ZodMiniType> => ({
  kybCaseDetailsSchema: parsers.kybCaseDetailsSchema,
  kybCreateCaseResponseSchema: parsers.kybCreateCaseResponseSchema,
  signedDocumentUrlSchema: parsers.signedDocumentUrlSchema,
  kycCreateSessionResponseSchema: parsers.kycCreateSessionResponseSchema,
  kycResultSchema: parsers.kycResultSchema,
});

/** A valid answer per compiled schema, the starting point of the near-valid ones. */
const VALID = {
  kybCaseDetailsSchema: detailsPayload() as Json,
  kybCreateCaseResponseSchema: { kybCase: { _id: 'c1', refId: 'b1', status: 'NOT_STARTED', flow: 'f1' }, token: 't' },
  signedDocumentUrlSchema: { url: 'https://storage.test/f?sig=1', expiresIn: 300 },
  kycCreateSessionResponseSchema: { success: true, token: 't' },
  kycResultSchema: { status: 'approved', score: 0.9 },
} satisfies Record<string, Json>;
const NAMES = Object.keys(VALID) as Array<keyof typeof VALID>;

// What a mutation puts in place: any JSON, and the values the schemas branch on (step types, statuses).
// Fresh each time: a value inserted twice must not become one object that a later mutation grows into a cycle.
const valueArb: fc.Arbitrary<Json> = fc.oneof(
  fc
    .constantFrom<Json>(...KYB_STEP_TYPES, 'videoCall', 'COMPLETED', 'ON_HOLD', null, true, 0, '', [], {})
    .map((value) => structuredClone(value)),
  fc.json({ maxDepth: 2 }).map((text) => JSON.parse(text) as Json),
);
const keyArb = fc.oneof(fc.constantFrom('extra', '__proto__', 'constructor', 'toString', 'type', 'id', ''), fc.string({ maxLength: 6 }));

/** Every object and array in a value, the value itself first. */
function containers(value: Json): Container[] {
  if (value === null || typeof value !== 'object') return [];
  return [value, ...(Array.isArray(value) ? value : Object.values(value)).flatMap(containers)];
}

type Container = Json[] | { [key: string]: Json };
type Mutation = (root: Json) => void;

/** A member of one of the value's containers, picked by two numbers; undefined when that container is empty. */
function member(root: Json, pick: number, which: number): { node: Container; key: number | string } | undefined {
  const all = containers(root);
  const node = all[pick % all.length];
  if (node === undefined) return undefined;
  const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
  return keys.length === 0 ? undefined : { node, key: keys[which % keys.length] as number | string };
}

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  // Drops a member: a required field goes missing, or an array gets shorter.
  fc.tuple(fc.nat(), fc.nat()).map<Mutation>(([pick, which]) => (root) => {
    const found = member(root, pick, which);
    if (Array.isArray(found?.node)) found.node.splice(found.key as number, 1);
    else if (found) delete found.node[found.key];
  }),
  // Replaces a member with another value (a wrong type, another step type, an unknown enum string).
  fc.tuple(fc.nat(), fc.nat(), valueArb).map<Mutation>(([pick, which, value]) => (root) => {
    const found = member(root, pick, which);
    if (found) (found.node as Record<number | string, Json>)[found.key] = value;
  }),
  // Adds a member the schema does not know (own, as JSON.parse makes it, even when named `__proto__`).
  fc.tuple(fc.nat(), keyArb, valueArb).map<Mutation>(([pick, key, value]) => (root) => {
    const all = containers(root);
    const node = all[pick % all.length];
    if (Array.isArray(node)) node.push(value);
    else if (node) Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
  }),
);

/** A near-valid answer as the client sees it: mutated, then through JSON as it arrives. */
const answerArb = (name: keyof typeof VALID) =>
  fc.array(mutationArb, { maxLength: 4 }).map((mutations) => {
    const value = structuredClone(VALID[name]) as Json;
    for (const mutate of mutations) mutate(value);
    return JSON.parse(JSON.stringify(value)) as unknown;
  });

describe("Node's compiled response schemas", () => {
  it.each(NAMES)('%s is compiled and answers exactly as zod parses it: same success, same value and key order, same issues', (name) => {
    const fast = responseSchemas(compiled)[name];
    const reference = responseSchemas(runtime)[name];
    // The comparison below means nothing if nothing was compiled.
    expect(fast).not.toBe(reference);
    fc.assert(
      fc.property(answerArb(name), (answer) => {
        const got = fast.safeParse(answer);
        const want = reference.safeParse(answer);
        expect(got.success).toBe(want.success);
        if (got.success && want.success) {
          expect(got.data).toStrictEqual(want.data);
          expect(JSON.stringify(got.data)).toBe(JSON.stringify(want.data));
        } else {
          expect(got.error?.issues).toEqual(want.error?.issues);
        }
      }),
      { numRuns: name === 'kybCaseDetailsSchema' ? 2_000 : 500 },
    );
  });

  it('a valid details answer keeps its unknown fields, and a broken one names the field', () => {
    const answer = { ...detailsPayload(), brandNew: { nested: [1] } };
    expect(compiled.kybCaseDetailsSchema.parse(answer)).toMatchObject({ brandNew: { nested: [1] } });
    const broken = detailsPayload({ flow: { id: 7 } });
    const result = compiled.kybCaseDetailsSchema.safeParse(broken);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['flow.id']);
  });

  describe("with zod's jitless set", () => {
    afterEach(() => {
      z.config({ jitless: false });
      vi.resetModules();
    });

    it('the schemas are used as they are: no generated code', async () => {
      z.config({ jitless: true });
      vi.resetModules();
      const fresh = responseSchemas(await import('../src/client/parsers-node.js'));
      const plain = responseSchemas(await import('../src/client/parsers.js'));
      for (const name of NAMES) expect(fresh[name]).toBe(plain[name]);
    });
  });
});
