import { VerikitError } from '../errors.js';

/** Why a delivery failed verification; stable strings, safe to log and to answer with. */
export type WebhookFailureReason =
  | 'missing_id'
  | 'missing_timestamp'
  | 'missing_signature'
  | 'invalid_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'malformed_signature'
  | 'too_many_signatures'
  | 'no_matching_signature'
  | 'invalid_body';

/**
 * A delivery that must not be trusted. The message names the reason only: never the secret,
 * the expected signature or the body.
 */
export class WebhookVerificationError extends VerikitError {
  override name = 'WebhookVerificationError';
  /** Machine-readable reason. */
  readonly reason: WebhookFailureReason;

  constructor(reason: WebhookFailureReason) {
    super('webhook_verification', `webhook verification failed: ${reason}`);
    this.reason = reason;
  }
}
