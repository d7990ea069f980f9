import type { VerikitClient } from '../client/client.js';
import { ConfigurationError } from '../errors.js';
import type { createInviteHandler } from './handler.js';

/**
 * Where a client from `createClient` carries {@link createInviteHandler}. The invite routes, which
 * need a client anyway, build their handlers through it: a bundle that creates no client (a
 * webhook-only Worker) then carries no invite code. `Symbol.for`, so a client from one copy of the
 * package (its CommonJS build, say) still works with routes from another.
 */
export const INVITE_HANDLER: unique symbol = Symbol.for('verikit.createInviteHandler');

/** The signature of {@link createInviteHandler}, as a client carries it. */
export type InviteHandlerFactory = typeof createInviteHandler;

/** A client as `createClient` makes it: a {@link VerikitClient} that also carries the invite handler. */
export interface InviteCapableClient extends VerikitClient {
  readonly [INVITE_HANDLER]: InviteHandlerFactory;
}

/** The invite handler factory a client carries; a client made by hand carries none, and the invite routes cannot start. */
export function inviteHandlerOf(client: VerikitClient): InviteHandlerFactory {
  const make = (client as Partial<InviteCapableClient>)[INVITE_HANDLER];
  if (typeof make !== 'function') {
    throw new ConfigurationError('client', 'invite routes need a client made by createClient or clientFromEnv');
  }
  return make;
}
