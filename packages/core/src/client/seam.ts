import { ConfigurationError } from '../errors.js';
import type { buildInviteRoutes } from '../invite/routes.js';
import type { FetchedResult } from '../webhook/handler.js';
import type { EventSubject } from '../webhook/identify.js';
import type { VerikitClient } from './client.js';

/**
 * What a client from `createClient` carries beyond {@link VerikitClient}: the code that only a
 * client's user needs (the invite routes, `ctx.fetchResult()`). Routes and webhook handlers reach
 * it through the client, so a bundle that creates no client (a webhook-only Worker) carries none
 * of it. `Symbol.for`, so a client from one copy of the package (its CommonJS build, say) still
 * works with routes from another.
 */
export const CLIENT_EXTRAS: unique symbol = Symbol.for('verikit.clientExtras');

/** The functions a client carries under {@link CLIENT_EXTRAS}; each takes the client, which may be a wrapper of the one that carries them. */
export interface ClientExtras {
  buildInviteRoutes: typeof buildInviteRoutes;
  fetchResult(client: VerikitClient, subject: EventSubject | null): Promise<FetchedResult>;
}

/** A client as `createClient` makes it: a {@link VerikitClient} that also carries its {@link ClientExtras}. */
export interface ClientWithExtras extends VerikitClient {
  readonly [CLIENT_EXTRAS]: ClientExtras;
}

/** The extras a client carries; a client made by hand carries none, and `feature` cannot work with it. */
export function extrasOf(client: VerikitClient, feature: string): ClientExtras {
  const extras = (client as Partial<ClientWithExtras>)[CLIENT_EXTRAS];
  if (extras === undefined) throw new ConfigurationError('client', `${feature} needs a client made by createClient or clientFromEnv`);
  return extras;
}
