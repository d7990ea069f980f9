import type { Request, RequestHandler, Response } from 'express';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether the request says it comes from a page of this very origin (or from no page at all). */
function sameOrigin(req: Request): boolean {
  // Every current browser says where a request comes from; `none` is the person's own doing (a bookmark).
  const site = req.get('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  // Older browsers send Origin with every cross-origin POST instead.
  const origin = req.get('origin');
  if (origin === undefined) return true; // not sent by a browser page: no one's cookies ride along unasked
  try {
    return new URL(origin).host === req.host;
  } catch {
    return false; // `null` (a sandboxed frame, a data: URL) or garbage
  }
}

/**
 * Refuses a state-changing request that another site made the browser send (cross-site request
 * forgery), by the browser's own account of where it comes from (`Sec-Fetch-Site`, else `Origin`),
 * as Go's `http.CrossOriginProtection` does: no token to thread through every form. It covers
 * the sign-in too, which SameSite cookies cannot (a login CSRF signs the visitor into an account
 * the attacker chose, and needs no cookie). Mount it before every route that changes state, but
 * not before the webhook route: that one is called by a server and authenticated by its signature.
 */
export function refuseCrossSite(refuse: (req: Request, res: Response) => void): RequestHandler {
  return (req, res, next) => {
    if (SAFE_METHODS.has(req.method) || sameOrigin(req)) return next();
    refuse(req, res);
  };
}
