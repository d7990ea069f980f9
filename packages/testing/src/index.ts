export { createFakeService, type FakeService, type FakeServiceOptions } from './fake/service.js';
export type { FakeCredentials, FakeFlow, FakeKycStatuses, FakeOrganization, FakeOrganizationOptions, StatusChange } from './fake/state.js';
export type { Fault, FakeRoute } from './fake/faults.js';
export { SVIX_SCHEDULE_MS, type DeliveryAttempt, type WebhookDeliveryOptions, type WebhookMessage } from './fake/webhooks.js';
export { signWebhook, type SignedWebhook, type SignWebhookInput } from './sign.js';
export {
  amlSummaryFixture,
  type FakeWebhookEvent,
  kybCaseDetailsFixture,
  kybDocumentFileFixture,
  type KybStepsOptions,
  kybStepsFixture,
  kycResultFixture,
  webhookEventFixture,
} from './fixtures.js';
export { FakeIdempotencyStore, type StoreCall } from './fake-store.js';
export { idempotencyStoreContract, StoreContractError, type StoreContractCase, type StoreContractOptions } from './store-contract.js';
