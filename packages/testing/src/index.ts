export type { FakeRoute, Fault } from './fake/faults.js';
export type { FakeChange, FakeHistoryEntry } from './fake/history.js';
export type { FakeRateLimit, FakeRequest } from './fake/requests.js';
export {
  createFakeService,
  type FakeDecisionOptions,
  type FakeRequestLog,
  type FakeService,
  type FakeServiceOptions,
} from './fake/service.js';
export type {
  FakeCredentials,
  FakeFlow,
  FakeKycStatuses,
  FakeOrganization,
  FakeOrganizationOptions,
  KybPrefill,
  KybSubmission,
  StatusChange,
} from './fake/state.js';
export {
  type DeliveryAttempt,
  ENDPOINT_DOWN_ERROR,
  SVIX_SCHEDULE_MS,
  type WebhookBehaviour,
  type WebhookDeliveryOptions,
  type WebhookMessage,
} from './fake/webhooks.js';
export { FakeIdempotencyStore, type StoreCall } from './fake-store.js';
export {
  amlSummaryFixture,
  type FakeWebhookEvent,
  type KybStepsOptions,
  kybCaseDetailsFixture,
  kybDocumentFileFixture,
  kybStepsFixture,
  kycResultFixture,
  webhookEventFixture,
} from './fixtures.js';
export {
  type LedgerContractCase,
  LedgerContractError,
  type LedgerContractOptions,
  type LedgerEffects,
  ledgerContract,
} from './ledger-contract.js';
export { type SignedWebhook, type SignWebhookInput, signWebhook } from './sign.js';
export { idempotencyStoreContract, type StoreContractCase, StoreContractError, type StoreContractOptions } from './store-contract.js';
