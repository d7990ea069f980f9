import * as z from 'zod/mini';
import { looseObject } from './loose-object.js';

/** Schema of the KYC session-creation response (spec 2.11). */
export const kycCreateSessionResponseSchema = looseObject({
  success: z.boolean(),
  token: z.string(),
});
/** The KYC session-creation response. */
export type KycCreateSessionResponse = z.infer<typeof kycCreateSessionResponseSchema>;

/** Schema of a KYC result: only `status` is documented; everything else is kept as is. */
export const kycResultSchema = looseObject({ status: z.string() });
/** A KYC result read by refId. */
export type KycResult = z.infer<typeof kycResultSchema>;
