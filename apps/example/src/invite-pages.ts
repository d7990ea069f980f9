import type { RequestHandler, Response } from 'express';

/** The message of a verikit route's JSON error (`{ error, message }`), or a general one. */
function messageOf(body: string): string {
  try {
    const { message } = JSON.parse(body) as { message?: unknown };
    if (typeof message === 'string' && message !== '') return message;
  } catch {
    // not JSON: fall through
  }
  return 'The verification could not be started.';
}

/**
 * verikit's invite routes answer errors as JSON, which suits a script that calls them; a person
 * who pressed "Verify" gets a page instead, through `render`. Mount it in front of the invite
 * routes: for a browser's request (Accept led by text/html) it takes the route's error answer as it
 * is sent and renders it; success (a 303 to the hosted page) and API callers pass untouched.
 */
export function inviteErrorPages(render: (res: Response, status: number, message: string) => void): RequestHandler {
  return (req, res, next) => {
    if (req.accepts(['json', 'html']) !== 'html') return next();
    const end = res.end;
    res.end = function (this: Response, ...args: unknown[]) {
      res.end = end;
      const [body] = args;
      if (res.statusCode < 400 || typeof body !== 'string') return (end as (...a: unknown[]) => Response).apply(this, args);
      render(res, res.statusCode, messageOf(body));
      return res;
    } as Response['end'];
    next();
  };
}
