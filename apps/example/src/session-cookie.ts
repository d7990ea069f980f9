import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';

/**
 * A session cookie. Over HTTPS (`req.secure`: TLS here, or a proxy trusted by
 * `VERIKIT_EXAMPLE_TRUST_PROXY` that says `X-Forwarded-Proto: https`) it is `Secure` and named
 * `__Host-…`, which browsers accept only from a secure origin, for the whole host, so no plain-HTTP
 * page or sibling subdomain can plant or overwrite it; over plain HTTP (a local run) it has the
 * plain name. It is read under the name its request's scheme gives, and only that one.
 */
export class SessionCookie {
  constructor(
    private readonly base: string,
    private readonly maxAgeMs: number,
  ) {}

  private name(req: Request): string {
    return req.secure ? `__Host-${this.base}` : this.base;
  }

  /** The session id the browser sent, if any. */
  read(req: Request): string | undefined {
    const name = this.name(req);
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const [key, ...value] = part.trim().split('=');
      if (key === name) return value.join('=');
    }
    return undefined;
  }

  /** A new random session id, set on the response; the caller stores it. */
  issue(req: Request, res: Response): string {
    const id = randomBytes(24).toString('base64url');
    res.cookie(this.name(req), id, { httpOnly: true, sameSite: 'lax', path: '/', secure: req.secure, maxAge: this.maxAgeMs });
    return id;
  }

  /** Tells the browser to forget the cookie. */
  clear(req: Request, res: Response): void {
    res.clearCookie(this.name(req), { httpOnly: true, sameSite: 'lax', path: '/', secure: req.secure });
  }
}

/**
 * `POST …/signout`: ends the session on the server (`end`) and in the browser, then sends the
 * browser to `then`.
 */
export function signOutRoute(cookie: SessionCookie, end: (sessionId: string) => Promise<void>, then: string): RequestHandler {
  return async (req, res) => {
    const id = cookie.read(req);
    if (id) await end(id);
    cookie.clear(req, res);
    res.redirect(303, then);
  };
}
