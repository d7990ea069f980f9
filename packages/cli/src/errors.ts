import { ExitCode, type ExitCodeName } from './exit-codes.js';
import type { RedisMode } from './target.js';

/** A failure the CLI expects and explains: one line for the operator, and the exit code it stands for. */
export class CliError extends Error {
  override name = 'CliError';
  /** Which {@link ExitCode} the process ends with. */
  readonly reason: ExitCodeName;

  constructor(reason: ExitCodeName, message: string) {
    super(message);
    this.reason = reason;
  }

  /** The process's exit code. */
  get exitCode(): number {
    return ExitCode[this.reason];
  }
}

/** What the CLI knows of where it connected, to name it in a message without the URL's password. */
export interface FailureContext {
  /** `PostgreSQL at 127.0.0.1:5432/app`, `Redis at 127.0.0.1:6379`. */
  where: string;
  /** What the operator passes to point the CLI elsewhere (`--schema`, `--queue and --prefix`). */
  setUpHint: string;
  /** Redis: one server, or a Cluster (`--cluster`). */
  redisMode?: RedisMode;
}

// Node's and the drivers' codes for a server that cannot be reached.
/** The message of a connection that did not finish within the connect bound (exit code 5). */
export const CONNECT_DID_NOT_ANSWER = 'connecting did not finish in time';

// ioredis's commandTimeout, the CLI's bound on connecting to Redis, pg's connectionTimeoutMillis and query_timeout.
const DID_NOT_ANSWER = new RegExp(
  `^(Command timed out|${CONNECT_DID_NOT_ANSWER}|Connection terminated due to connection timeout|Query read timeout)$`,
);
const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);
// PostgreSQL SQLSTATEs: bad password, no such role or database, server starting or shutting down, too many connections.
const PG_REFUSED: Record<string, string> = {
  '28P01': 'authentication failed',
  '28000': 'authentication failed',
  '3D000': 'the database does not exist',
  '57P03': 'the server is not accepting connections yet',
  '53300': 'the server has no connection to spare',
};
// Node's codes for a server certificate refused; the first ones: signed by a CA it does not trust.
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
]);
const REFUSED_CERTIFICATE = new Set([...UNTRUSTED, 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID']);
// undefined_table, invalid_schema_name: a query reached the database before migrate() did.
const PG_MISSING = new Set(['42P01', '3F000']);

/** The code of an error, or of the first of an AggregateError's (Node's connection attempts to each address). */
function codeOf(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  return Array.isArray(errors) ? codeOf(errors[0]) : undefined;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A payload that would not open, said in terms of the variable the operator sets. */
function sealedMessage(error: { reason?: unknown; keyId?: unknown }): string {
  const key = JSON.stringify(String(error.keyId ?? '?'));
  if (error.reason === 'no_keys')
    return `a stored body is sealed (key ${key}) and VERIKIT_ENCRYPTION_KEYS is not set: set it to the app's keys (id:base64, current first)`;
  if (error.reason === 'unknown_key')
    return `a stored body is sealed with key ${key}, which VERIKIT_ENCRYPTION_KEYS does not hold: add that key (after the current one)`;
  return `a stored body sealed with key ${key} does not open with the key VERIKIT_ENCRYPTION_KEYS gives that id (another key under the same id, or an altered value); nothing was changed`;
}

/**
 * Any failure as a {@link CliError}: connection, setup and sealing failures by their codes (the
 * drivers' and verikit's own), everything else as a plain failure with its message.
 */
export function asCliError(error: unknown, context: FailureContext | undefined): CliError {
  if (error instanceof CliError) return error;
  const code = codeOf(error);
  const where = context?.where ?? 'the database';
  if (code === 'payload_sealed') return new CliError('sealed', sealedMessage(error as { reason?: unknown; keyId?: unknown }));
  if (code === 'invalid_config') return new CliError('configuration', messageOf(error));
  if (code === 'invalid_argument') return new CliError('usage', messageOf(error));
  if (code !== undefined && NETWORK.has(code)) return new CliError('unreachable', `cannot reach ${where} (${code})`);
  if (code !== undefined && REFUSED_CERTIFICATE.has(code))
    return new CliError(
      'unreachable',
      `cannot reach ${where}: its TLS certificate was refused (${messageOf(error)})${UNTRUSTED.has(code) ? '; a private CA: NODE_EXTRA_CA_CERTS=<its PEM file>' : ''}`,
    );
  if (code !== undefined && PG_REFUSED[code] !== undefined) return new CliError('unreachable', `cannot use ${where}: ${PG_REFUSED[code]}`);
  if (code === 'timeout') return new CliError('unreachable', `${where} did not answer in time (${messageOf(error)})`);
  // undefined_column, not_null_violation: tables migrated by another version of the engine than the one the CLI loaded
  // (verikit's own statements write no NULL a table of their version refuses).
  if (code === '42703' || code === '23502')
    return new CliError(
      'notSetUp',
      `verikit's tables in ${where} are not those of the engine version the CLI runs: run that version's migrate(), or install the version the app runs beside the CLI`,
    );
  if (code !== undefined && PG_MISSING.has(code))
    return new CliError(
      'notSetUp',
      `verikit's tables are not in ${where}: run the app's migrate() first, or pass the app's ${context?.setUpHint}`,
    );
  const text = messageOf(error);
  // ioredis: a password refused, a connection that ended under a command, every seed of a Cluster failed.
  if (/^(WRONGPASS|NOAUTH)/.test(text)) return new CliError('unreachable', `cannot use ${where}: authentication failed`);
  if (/^Connection is closed|^connect ETIMEDOUT|Stream isn't writeable|^None of startup nodes is available/.test(text))
    return new CliError('unreachable', `cannot reach ${where} (${text})`);
  // ioredis's own bound on a Cluster's first CLUSTER SLOTS, the CLI's on connecting, a command's (ioredis, pg) once connected.
  if (text === 'timeout' || DID_NOT_ANSWER.test(text)) return new CliError('unreachable', `${where} did not answer in time`);
  // A node of a Cluster addressed as one server answers for the slots it serves, and redirects the rest.
  const redirect = /^(MOVED|ASK|CROSSSLOT) /.exec(text)?.[1];
  if (redirect !== undefined && context?.redisMode === 'server')
    return new CliError(
      'configuration',
      `${where} is a node of a Redis Cluster (it answered ${redirect}): add --cluster, and the CLI reaches every node from it`,
    );
  if (/cluster support disabled/.test(text) && context?.redisMode === 'cluster')
    return new CliError('configuration', `${where} is one Redis server, not a Cluster (cluster support disabled): drop --cluster`);
  return new CliError('failure', error instanceof Error && error.name !== 'Error' ? `${error.name}: ${text}` : text);
}
