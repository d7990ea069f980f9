import type { NodeReadableLike } from './read-body.js';

/** A Node request (`IncomingMessage`) as a Web-style framework on Node may expose it beside its `Request`. */
export interface NodeRequestLike extends NodeReadableLike {
  readonly headers: Record<string, string | string[] | undefined>;
  /** `null` until something starts reading the body (a `data` listener, `resume()`, a pipe). */
  readonly readableFlowing: boolean | null;
}

/**
 * The Node request behind a Web-style framework (`c.env.incoming` on `@hono/node-server`), when
 * nothing has begun reading its body; otherwise undefined. Reading it directly skips the `Request`
 * and web stream such a framework builds for a body read through its Web API, which cost several
 * times the webhook route's own work per delivery there (bench/adapters.mjs). Node build only: the
 * Web build's twin answers undefined, so a Worker bundle carries none of this.
 */
export function unreadNodeRequest(value: unknown): NodeRequestLike | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const request = value as Partial<NodeRequestLike>;
  const isNodeRequest =
    typeof request.on === 'function' &&
    typeof request.pause === 'function' &&
    typeof request.headers === 'object' &&
    request.headers !== null &&
    request.readableFlowing === null;
  return isNodeRequest && !request.readableEnded && !request.destroyed ? (request as NodeRequestLike) : undefined;
}
