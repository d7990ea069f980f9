// `@verikit/core/schemas`: the zod schemas of the API's answers, an entry of their own so that the
// main entry (a webhook route, say) never loads zod. The client loads them at its first call.
export * from './kyb.js';
export * from './kyc.js';
export type { OpenEnum } from './open-enum.js';
