// Everything that is the same in the Node and the Web build.

export type {
  CreateKybCaseInput,
  CreateKycSessionInput,
  DocumentRef,
  KybApi,
  KycApi,
  VerificationLink,
  VerikitClient,
} from './client/client.js';
export type { DocumentDownload } from './client/download.js';
export {
  AbortedError,
  ApiError,
  AuthenticationError,
  BadRequestError,
  ClientError,
  ConnectionError,
  type ConnectionFailure,
  NotFoundError,
  RateLimitError,
  type RequestContext,
  type ResponseDetails,
  type ResponseIssue,
  ServerError,
  TimeoutError,
  type TimeoutKind,
  UnexpectedResponseError,
} from './client/errors.js';
export type { CallOptions } from './client/execute.js';
export {
  type ClientOptions,
  clientOptionsFromEnv,
  ENV_VARIABLES,
  type Environment,
  type RequestEvent,
  type ResponseEvent,
} from './client/options.js';
export { ConfigurationError, InvalidArgumentError, VerikitError, type VerikitErrorCode } from './errors.js';
export {
  buildVerificationLink,
  type LinkEnvironment,
  readTokenExpiry,
  type VerificationLinkInput,
} from './link/link.js';
export * from './schemas/kyb.js';
export * from './schemas/kyc.js';
export type { OpenEnum } from './schemas/open-enum.js';
export { VERSION } from './version.js';
