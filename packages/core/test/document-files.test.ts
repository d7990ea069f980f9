import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type KybDocumentStep, kybDocumentFileSchema } from '../src/schemas/kyb.js';
import { collectDocumentFiles, isDocumentFile } from '../src/schemas/kyb-values.js';

// Values near the file shape: each field present or not, of the right type or a wrong one.
const anyValue = fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.array(fc.string()));
const near = (right: fc.Arbitrary<unknown>) => fc.option(fc.oneof(right, right, anyValue), { nil: undefined });
const nearFile = fc.record(
  {
    id: near(fc.string()),
    originalName: near(fc.string()),
    mimeType: near(fc.string()),
    size: near(fc.double()),
    createdAt: near(fc.string()),
    analysis: near(fc.oneof(fc.record({ matches: near(fc.boolean()) }, { requiredKeys: [] }), fc.array(fc.boolean()))),
    url: near(fc.string()),
    extra: near(fc.string()),
  },
  { requiredKeys: [] },
);

describe('collectDocumentFiles without zod', () => {
  it('takes a value for a file exactly when kybDocumentFileSchema accepts it', () => {
    fc.assert(
      fc.property(fc.oneof(nearFile, anyValue), (value) => {
        expect(isDocumentFile(value)).toBe(kybDocumentFileSchema.safeParse(value).success);
      }),
      { numRuns: 2_000 },
    );
  });

  it('finds files at any depth of the slots, each once, and keeps their unknown fields', () => {
    const file = { id: 'f1', originalName: 'a.pdf', mimeType: 'application/pdf', size: 3, url: '/files/f1', scan: 'clean' };
    const other = { id: 'f2', originalName: 'b.png', mimeType: 'image/png', size: 4, url: '/files/f2' };
    const step = {
      id: 's',
      title: 'Documents',
      type: 'document',
      documents: [{ slot: 'id', files: [file, { note: 'not a file' }] }, file],
      additionalFiles: [{ nested: { deeper: other } }],
    } as KybDocumentStep;
    expect(collectDocumentFiles(step)).toEqual([file, other]);
  });
});
