import type { VerikitClient } from '../client/client.js';
import type { VerikitRoutes, VerikitRoutesOptions } from '../routes.js';
import type { Logger } from '../util/logger.js';
import { createInviteHandler } from './handler.js';

/**
 * The invite routes of `createVerikitRoutes`, built through the client that carries this function:
 * a bundle that creates no client (a webhook-only Worker) then carries no invite code.
 */
export function buildInviteRoutes<Req>(
  client: VerikitClient,
  invite: NonNullable<VerikitRoutesOptions<Req>['invite']>,
  logger: Logger,
): Pick<VerikitRoutes<Req>, 'inviteKyb' | 'inviteKyc'> {
  // At start, not at the first invite: a client without its link settings could only ever answer 500.
  client.assertLinksConfigured('the invite routes');
  const options = { logger, errorPage: invite.errorPage };
  return {
    ...(invite.kyb && { inviteKyb: createInviteHandler(client, { kind: 'kyb', options: invite.kyb }, options) }),
    ...(invite.kyc && { inviteKyc: createInviteHandler(client, { kind: 'kyc', options: invite.kyc }, options) }),
  };
}
