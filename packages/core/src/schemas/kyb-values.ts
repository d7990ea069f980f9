// The KYB values and helpers that need no schema, so that importing them (from the main entry, or
// the ledger) does not load zod: only the client's first call and the `schemas` subpath do.
import type { KybDocumentFile, KybDocumentStep, KybStatus } from './kyb.js';

/** KYB case statuses documented in spec 2.2. */
export const KYB_STATUSES = ['NOT_STARTED', 'IN_PROGRESS', 'IN_REVIEW', 'COMPLETED', 'REJECTED'] as const;
/** KYB step types documented in spec 2.4. */
export const KYB_STEP_TYPES = ['form', 'address', 'document', 'ubo', 'relatedBusinesses'] as const;

/** Whether a KYB status is final: results are read once a case is `COMPLETED` or `REJECTED`. */
export function isFinal(status: KybStatus): status is 'COMPLETED' | 'REJECTED' {
  return status === 'COMPLETED' || status === 'REJECTED';
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const optional = (value: unknown, check: (v: unknown) => boolean): boolean => value === undefined || check(value);
const isString = (value: unknown): boolean => typeof value === 'string';

/**
 * Whether a value has the file shape `kybDocumentFileSchema` accepts (spec 2.6a), checked without
 * zod; test/document-files.test.ts holds the two to the same answer.
 */
export function isDocumentFile(value: unknown): value is KybDocumentFile {
  return (
    isRecord(value) &&
    isString(value.id) &&
    isString(value.originalName) &&
    isString(value.mimeType) &&
    Number.isFinite(value.size) &&
    optional(value.createdAt, isString) &&
    optional(value.analysis, (analysis) => isRecord(analysis) && optional(analysis.matches, (m) => typeof m === 'boolean')) &&
    isString(value.url)
  );
}

/**
 * Every resolved file inside a document step's `documents` and `additionalFiles`. The slot
 * structure is not documented, so this walks it and keeps whatever matches the file shape.
 */
export function collectDocumentFiles(step: KybDocumentStep): KybDocumentFile[] {
  const found: KybDocumentFile[] = [];
  const seen = new Set<unknown>();
  const walk = (value: unknown, depth: number): void => {
    if (depth > 6 || value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    if (isDocumentFile(value)) {
      found.push(value);
      return;
    }
    for (const child of Array.isArray(value) ? value : Object.values(value)) walk(child, depth + 1);
  };
  walk(step.documents, 0);
  walk(step.additionalFiles, 0);
  return found;
}
