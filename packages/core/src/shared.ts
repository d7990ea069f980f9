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
  ResponseTooLargeError,
  ServerError,
  StorageRefusedError,
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
export type { WritableLike, WriteOutcome } from './client/write-to.js';
export { ConfigurationError, InvalidArgumentError, VerikitError, type VerikitErrorCode } from './errors.js';
export {
  checkHealth,
  type HealthCheck,
  type HealthDownReason,
  type HealthOptions,
  type HealthProblem,
  type HealthReport,
  type HealthResponse,
  type HealthStatus,
  healthResponse,
} from './health/health.js';
export { InboxEventAbandonedError, InboxEventTimeoutError, UnidentifiedEventError } from './inbox/errors.js';
export {
  type AcceptResult,
  type DeadLetter,
  type DeadLetterQuery,
  type Inbox,
  type InboxAdmin,
  type InboxDelivery,
  type InboxEngine,
  type InboxEraseResult,
  type InboxEvent,
  type InboxEventState,
  type InboxRecord,
  type InboxStats,
  type ResealResult,
  TransactionEndedError,
} from './inbox/inbox.js';
export { createInboxWorker, type InboxContext, type InboxErrorStage, type InboxWorker, type InboxWorkerOptions } from './inbox/worker.js';
export {
  createInviteHandler,
  type InviteErrorPage,
  type InviteFailure,
  type InviteHandler,
  type InviteHandlerOptions,
  type InviteRequest,
  type InviteResponse,
  type KybInviteOptions,
  type KybParty,
  type KycInviteOptions,
  type KycParty,
} from './invite/handler.js';
export { defaultFingerprint, type Fingerprint, type VerificationResult } from './ledger/fingerprint.js';
export {
  checkLedgerKey,
  type LedgerAdmin,
  type LedgerChange,
  type LedgerEngine,
  type LedgerEntry,
  type LedgerKey,
  type LedgerListOptions,
  type LedgerLock,
  type LedgerPendingOfKind,
  type LedgerStats,
  MAX_REF_ID_LENGTH,
  missedWebhook,
  type Observation,
  type ObservationSource,
  type RecordOutcome,
  type TrackOutcome,
  UntrackedVerificationError,
} from './ledger/ledger.js';
export { createMemoryLedger, type MemoryLedgerOptions, type MemoryLedgerTransaction } from './ledger/memory.js';
export {
  LedgerBusyError,
  type LedgerChangeContext,
  type LedgerObserverOptions,
  type ObserveOutcome,
} from './ledger/observe.js';
export { createReconciler, type Reconciler, type ReconcilerOptions, type ReconcilerStats } from './ledger/reconciler.js';
export type { ReconcileScheduleOptions } from './ledger/schedule.js';
export {
  buildVerificationLink,
  type LinkEnvironment,
  readTokenExpiry,
  type VerificationLinkInput,
} from './link/link.js';
export {
  type AesGcmEngine,
  type EncryptionKey,
  type EncryptionOptions,
  openUnsealed,
  PayloadSealError,
  type PayloadSealer,
} from './privacy/seal.js';
export {
  type AdapterInfo,
  declaredLengthExceeds,
  type VerikitRoutes,
  type VerikitRoutesOptions,
  type WebhookArrival,
  type WebhookBodySource,
  type WebhookRoute,
  type WebhookRouteOptions,
} from './routes.js';
// Types only: the zod schemas behind them are in `@verikit/core/schemas`, so that this entry loads no zod.
export type {
  AmlSummary,
  KybAddressStep,
  KybCaseDetails,
  KybCreateCaseResponse,
  KybDocumentFile,
  KybDocumentStep,
  KybEnrichment,
  KybField,
  KybFlowsResponse,
  KybFormStep,
  KybOtherStep,
  KybRelatedBusinessesStep,
  KybStatus,
  KybStep,
  KybUboStep,
  KybUnknownStepType,
  ReopenEntry,
  SignedDocumentUrl,
  WebsiteAnalysis,
} from './schemas/kyb.js';
export { collectDocumentFiles, isFinal, KYB_STATUSES, KYB_STEP_TYPES } from './schemas/kyb-values.js';
export type { KycCreateSessionResponse, KycResult } from './schemas/kyc.js';
export { createKycStatusClassifier, type KycDecision, type KycStatusClassifierOptions } from './schemas/kyc-values.js';
export type { OpenEnum } from './schemas/open-enum.js';
export { MemoryIdempotencyStore, type MemoryIdempotencyStoreOptions } from './store/memory.js';
export {
  type ClaimOptions,
  type ClaimResult,
  DEFAULT_RETENTION_MS,
  type IdempotencyStore,
  type Lease,
  LeaseLostError,
  type LeaseOutcome,
  StoreFullError,
} from './store/store.js';
export { type SharedTimeouts, StorageTimeoutError, withTimeout } from './store/timeout.js';
export type { OpenTelemetryInstrumentation } from './telemetry/seam.js';
export type { OpenTelemetryApi, TelemetryOption } from './telemetry/tracing.js';
export type { Deadline, Deadlines } from './util/deadlines.js';
export { consoleLogger, describeError, type LogFields, type Logger, resolveLogger } from './util/logger.js';
export type { NodeRequestLike } from './util/node-request.js';
export type { BodyLimits, BodyRead, BodyReader, BodyStream, NodeReadableLike } from './util/read-body.js';
export { readNodeBody } from './util/read-node-body.js';
export { batchByTurn, type TurnBatchOptions } from './util/turn-batch.js';
export { VERSION } from './version.js';
export { type WebhookFailureReason, WebhookVerificationError } from './webhook/errors.js';
export type {
  FetchedResult,
  InboxWebhookOptions,
  InlineWebhookOptions,
  WebhookContext,
  WebhookErrorStage,
  WebhookHandler,
  WebhookHandlerBaseOptions,
  WebhookHandlerOptions,
  WebhookRequest,
  WebhookResponse,
} from './webhook/handler.js';
export { defaultIdentify, type EventKind, type EventSubject, type IdentifyEvent } from './webhook/identify.js';
export type { WebhookBody, WebhookHeaders } from './webhook/input.js';
export { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, webhookResponses } from './webhook/responses.js';
export { checkWebhookSecret, MIN_SECRET_BYTES } from './webhook/secrets.js';
export { MAX_SIGNATURES, type VerifiedDelivery, type WebhookVerifier, type WebhookVerifierOptions } from './webhook/verify.js';
