/** Stable, machine-readable codes carried by every verikit error. */
export type VerikitErrorCode =
  | 'invalid_argument'
  | 'invalid_config'
  | 'authentication'
  | 'bad_request'
  | 'not_found'
  | 'rate_limited'
  | 'server_error'
  | 'api_error'
  | 'unexpected_response'
  | 'response_too_large'
  | 'storage_refused'
  | 'timeout'
  | 'connection'
  | 'aborted'
  | 'webhook_verification'
  | 'store_full'
  | 'lease_lost'
  | 'transaction_ended'
  | 'not_durable'
  | 'event_timeout'
  | 'event_abandoned'
  | 'untracked'
  | 'unidentified_event'
  | 'ledger_busy'
  | 'payload_sealed';

/** Base class of every error verikit throws; switch on `code`, not on the message. */
export class VerikitError extends Error {
  // A literal in every class, not `new.target.name`: bundlers that minify (Next.js, say) rename classes.
  override name = 'VerikitError';
  /** Stable machine-readable code. */
  readonly code: VerikitErrorCode;

  constructor(code: VerikitErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  /** A plain, secret-free view for logs and `JSON.stringify`. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, code: this.code, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      if (key !== 'cause' && value !== undefined) out[key] = value;
    }
    return out;
  }
}

/** An argument given to a verikit function is unusable (empty refId, foreign document URL, ...). */
export class InvalidArgumentError extends VerikitError {
  override name = 'InvalidArgumentError';
  constructor(message: string) {
    super('invalid_argument', message);
  }
}

/** Client or handler options are missing or malformed: thrown at creation; an integration that hands a route a body it cannot read fails that request with one. */
export class ConfigurationError extends VerikitError {
  override name = 'ConfigurationError';
  /** The option or environment variable at fault. */
  readonly option: string;

  constructor(option: string, message: string) {
    super('invalid_config', message);
    this.option = option;
  }
}
