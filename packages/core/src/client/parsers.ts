// What the client checks with zod: loaded by client.ts at the first call, not with the package, so
// that a process which only receives webhooks never loads zod.
import * as z from 'zod/mini';
import { InvalidArgumentError } from '../errors.js';
import type { CreateKybCaseInput, CreateKycSessionInput } from './client.js';

export {
  kybCaseDetailsSchema,
  kybCreateCaseResponseSchema,
  kybFlowsResponseSchema,
  signedDocumentUrlSchema,
} from '../schemas/kyb.js';
export { kycCreateSessionResponseSchema, kycResultSchema } from '../schemas/kyc.js';

const nonEmpty = z.string().check(z.minLength(1));
const createCaseInput = z.strictObject({
  refId: nonEmpty,
  flow: z.optional(nonEmpty),
  country: z.optional(nonEmpty),
  countryState: z.optional(nonEmpty),
});
const createSessionInput = z.strictObject({ refId: nonEmpty, flowId: z.optional(nonEmpty) });

function checkInput<T>(schema: z.ZodMiniType<T>, input: unknown, what: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue?.code === 'unrecognized_keys') {
    throw new InvalidArgumentError(
      `${what}: ${issue.keys.join(', ')} not accepted by the service (business details are collected in the hosted flow)`,
    );
  }
  throw new InvalidArgumentError(`${what}: ${issue?.path.join('.') || 'input'} ${issue?.message ?? 'is invalid'}`);
}

/** The input of `kyb.createCase`, checked (an InvalidArgumentError names what is wrong). */
export const checkCreateCaseInput = (input: unknown): CreateKybCaseInput => checkInput(createCaseInput, input, 'kyb.createCase');

/** The input of `kyc.createSession`, checked (an InvalidArgumentError names what is wrong). */
export const checkCreateSessionInput = (input: unknown): CreateKycSessionInput =>
  checkInput(createSessionInput, input, 'kyc.createSession');
