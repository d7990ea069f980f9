// The client's parsers on Node: the response schemas compiled by zod (`z.compile`) when the client's
// first call loads this module. A valid answer is checked by one generated function per schema
// instead of a parser call per field (a case's details cost about a third of the CPU, bench/client.mjs);
// anything else falls back to zod's own parser, so an UnexpectedResponseError names the same fields
// (test/parsers-node.test.ts holds the two to the same answers). Not in the Web build: a Worker may
// not generate code, and the compiler would add about 10 KB gzip to its bundle.
import * as z from 'zod/mini';
import * as parsers from './parsers.js';

/** The schema compiled, unless zod is set `jitless` (no generated code); where generating fails, zod hands it back as is. */
function compiled<T extends z.ZodMiniType>(schema: T): T {
  return z.config().jitless ? schema : z.compile(schema);
}

export { checkCreateCaseInput, checkCreateSessionInput, kybFlowsResponseSchema } from './parsers.js';
/** The KYB case details schema, compiled. */
export const kybCaseDetailsSchema = compiled(parsers.kybCaseDetailsSchema);
/** The KYB case-creation response schema, compiled. */
export const kybCreateCaseResponseSchema = compiled(parsers.kybCreateCaseResponseSchema);
/** The signed-URL response schema, compiled. */
export const signedDocumentUrlSchema = compiled(parsers.signedDocumentUrlSchema);
/** The KYC session-creation response schema, compiled. */
export const kycCreateSessionResponseSchema = compiled(parsers.kycCreateSessionResponseSchema);
/** The KYC result schema, compiled. */
export const kycResultSchema = compiled(parsers.kycResultSchema);
