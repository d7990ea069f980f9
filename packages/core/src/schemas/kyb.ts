import * as z from 'zod/mini';
import { KYB_STATUSES, KYB_STEP_TYPES } from './kyb-values.js';
import { looseObject } from './loose-object.js';
import { openEnum } from './open-enum.js';

const isoString = z.string();
const jsonObject = z.record(z.string(), z.unknown());

/** Schema of a KYB case status (open: unknown strings pass). */
export const kybStatusSchema = openEnum(KYB_STATUSES);
/** A KYB case status. */
export type KybStatus = z.infer<typeof kybStatusSchema>;

/** Schema of the KYB case-creation response (spec 2.1). */
export const kybCreateCaseResponseSchema = looseObject({
  kybCase: looseObject({
    _id: z.string(),
    refId: z.string(),
    status: kybStatusSchema,
    flow: z.string(),
  }),
  token: z.string(),
});
/** The KYB case-creation response. */
export type KybCreateCaseResponse = z.infer<typeof kybCreateCaseResponseSchema>;

/** Schema of a field object (spec 2.5). */
export const kybFieldSchema = looseObject({
  key: z.string(),
  title: z.string(),
  value: z.unknown(),
  type: z.optional(z.union([z.string(), z.array(z.string())])),
  required: z.boolean(),
  format: z.optional(z.string()),
  groupKey: z.optional(z.string()),
  groupTitle: z.optional(z.string()),
});
/** A collected form or address field. */
export type KybField = z.infer<typeof kybFieldSchema>;

/** Schema of normalized business data (spec 2.6); inner fields are not documented. */
export const kybEnrichmentSchema = looseObject({
  names: z.optional(jsonObject),
  address: z.optional(jsonObject),
  geo: z.optional(jsonObject),
  industry: z.optional(z.array(z.unknown())),
  company: z.optional(jsonObject),
  workforce: z.optional(jsonObject),
  financials: z.optional(jsonObject),
});
/** Normalized business data attached to some form steps. */
export type KybEnrichment = z.infer<typeof kybEnrichmentSchema>;

/** Schema of a resolved, uploaded file (spec 2.6a). */
export const kybDocumentFileSchema = looseObject({
  id: z.string(),
  originalName: z.string(),
  mimeType: z.string(),
  size: z.number(),
  createdAt: z.optional(isoString),
  analysis: z.optional(looseObject({ matches: z.optional(z.boolean()) })),
  url: z.string(),
});
/** An uploaded file; its `url` is an API path that yields a short-lived signed download URL. */
export type KybDocumentFile = z.infer<typeof kybDocumentFileSchema>;

/** Schema of the signed-URL response (spec 2.6a). */
export const signedDocumentUrlSchema = looseObject({
  url: z.string(),
  expiresIn: z.number(),
});
/** A short-lived signed download URL and its lifetime in seconds. */
export type SignedDocumentUrl = z.infer<typeof signedDocumentUrlSchema>;

const stepBase = { id: z.string(), title: z.string() };

/** Schema of a `form` step. */
export const kybFormStepSchema = looseObject({
  ...stepBase,
  type: z.literal('form'),
  fields: z.array(kybFieldSchema),
  enrichment: z.optional(kybEnrichmentSchema),
});
/** Schema of an `address` step. */
export const kybAddressStepSchema = looseObject({
  ...stepBase,
  type: z.literal('address'),
  fields: z.array(kybFieldSchema),
});
/** Schema of a `document` step; the slot structure is not documented, so slots stay open. */
export const kybDocumentStepSchema = looseObject({
  ...stepBase,
  type: z.literal('document'),
  documents: z.array(z.unknown()),
  additionalFiles: z.array(z.unknown()),
});
/** Schema of a `ubo` step; entries are not documented beyond the key. */
export const kybUboStepSchema = looseObject({ ...stepBase, type: z.literal('ubo'), ubos: z.array(z.unknown()) });
/** Schema of a `relatedBusinesses` step; entries are not documented beyond the key. */
export const kybRelatedBusinessesStepSchema = looseObject({
  ...stepBase,
  type: z.literal('relatedBusinesses'),
  relatedBusinesses: z.array(z.unknown()),
});

/** A `form` step. */
export type KybFormStep = z.infer<typeof kybFormStepSchema>;
/** An `address` step. */
export type KybAddressStep = z.infer<typeof kybAddressStepSchema>;
/** A `document` step. */
export type KybDocumentStep = z.infer<typeof kybDocumentStepSchema>;
/** A `ubo` step. */
export type KybUboStep = z.infer<typeof kybUboStepSchema>;
/** A `relatedBusinesses` step. */
export type KybRelatedBusinessesStep = z.infer<typeof kybRelatedBusinessesStepSchema>;
/**
 * The `type` of a step the spec does not document yet: a string at run time, typed apart from every
 * documented name so that `step.type === 'document'` narrows a {@link KybStep} to exactly
 * {@link KybDocumentStep}. Read it as a string with `String(step.type)`.
 */
export interface KybUnknownStepType {
  /** Type-only, absent at run time: what keeps the documented names from matching this type. */
  readonly __kybUnknownStepType: true;
  toString(): string;
}
/** A step of a type the spec does not document yet; kept whole. */
export interface KybOtherStep {
  id: string;
  title: string;
  type: KybUnknownStepType;
  [key: string]: unknown;
}
/**
 * Any KYB step; narrow on `type`. A type the spec adds later arrives as a {@link KybOtherStep}.
 * @example
 * for (const step of details.steps) {
 *   if (step.type === 'document') console.log(collectDocumentFiles(step));
 *   else if (step.type === 'form') console.log(step.fields);
 *   else if (String(step.type) === 'aNewType') console.log(step);
 * }
 */
export type KybStep = KybFormStep | KybAddressStep | KybDocumentStep | KybUboStep | KybRelatedBusinessesStep | KybOtherStep;

const knownStepTypes: ReadonlySet<string> = new Set(KYB_STEP_TYPES);

/**
 * Any step. A documented type is found by `type` in one lookup and checked by its own schema;
 * a type the spec does not know yet matches the second branch (common keys only) and is kept
 * whole. A documented type that breaks its schema fails both, and the client reports the first
 * branch's issues, so the error names e.g. `steps.1.fields.0.key`.
 */
export const kybStepSchema = z.union([
  z.discriminatedUnion('type', [
    kybFormStepSchema,
    kybAddressStepSchema,
    kybDocumentStepSchema,
    kybUboStepSchema,
    kybRelatedBusinessesStepSchema,
  ]),
  looseObject({
    ...stepBase,
    type: z
      .string()
      .check(z.refine((type) => !knownStepTypes.has(type), { message: 'breaks the schema of its documented step type', abort: true })),
  }),
]) as unknown as z.ZodMiniType<KybStep>;

/** Schema of an AML summary (spec 2.7). */
export const amlSummarySchema = looseObject({
  refId: z.optional(z.string()),
  name: z.optional(z.string()),
  status: z.string(),
  businessRole: openEnum(['primary', 'related'] as const),
  businessName: z.optional(z.string()),
  caseType: z.optional(z.string()),
  sourceType: z.optional(z.string()),
  ongoingMonitoring: z.optional(z.boolean()),
  totalHits: z.optional(z.number()),
  createdAt: z.optional(isoString),
  reviewedAt: z.optional(isoString),
});
/** An AML screening summary. */
export type AmlSummary = z.infer<typeof amlSummarySchema>;

/** Schema of website analysis (spec 2.8). */
export const websiteAnalysisSchema = looseObject({
  domain: z.string(),
  status: z.optional(z.string()),
  initiatedAt: z.optional(isoString),
  completedAt: z.optional(isoString),
  data: z.optional(jsonObject),
});
/** Website analysis, present only when available. */
export type WebsiteAnalysis = z.infer<typeof websiteAnalysisSchema>;

/** Schema of a reopen entry (spec 2.9). */
export const reopenEntrySchema = looseObject({
  stepIds: z.array(z.string()),
  reason: z.optional(z.string()),
  reopenedAt: z.optional(isoString),
});
/** One reopen of given steps. */
export type ReopenEntry = z.infer<typeof reopenEntrySchema>;

/** Schema of the KYB case details payload (spec 2.2), the stable customer contract. */
export const kybCaseDetailsSchema = looseObject({
  id: z.string(),
  refId: z.string(),
  status: kybStatusSchema,
  flagType: z.optional(openEnum(['NONE', 'LOW', 'MEDIUM', 'HIGH'] as const)),
  businessName: z.optional(z.nullable(z.string())),
  flow: looseObject({ id: z.string(), title: z.optional(z.string()), country: z.optional(z.string()) }),
  steps: z.array(kybStepSchema),
  amlScreening: looseObject({ primary: z.array(amlSummarySchema), related: z.array(amlSummarySchema) }),
  websiteAnalysis: z.optional(websiteAnalysisSchema),
  reopenHistory: z.array(reopenEntrySchema),
  createdAt: z.optional(isoString),
  updatedAt: z.optional(isoString),
});
/** KYB case details. */
export type KybCaseDetails = z.infer<typeof kybCaseDetailsSchema>;

/** Flow discovery answers: their shape is not documented, so they are returned as parsed JSON. */
export const kybFlowsResponseSchema = z.unknown();
/** The (undocumented) JSON of `GET /kyb/flows` or `GET /kyb/flows/default`. */
export type KybFlowsResponse = unknown;
