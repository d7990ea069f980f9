// The reviewer console: the organization's side of the fake (deciding cases left in review,
// reopening, overturning, webhooks off and on). It acts for the organization, so it has a secret of
// its own (never the API key), kept in an HttpOnly SameSite=Strict cookie, and every form is
// checked against cross-site requests: a token, and Origin / Sec-Fetch-Site where the browser sends them.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidArgumentError } from '@verikit/core';
import { escapeHtml, page } from './html.js';
import { readBody, sendHtml } from './http.js';
import { type ReviewerView, reviewerPage } from './reviewer-page.js';
import type { FakeOrganization, FakeState } from './state.js';
import type { WebhookDispatcher } from './webhooks.js';

/** Where the console is served, on the fake's own origin. */
export const REVIEWER_PATH = '/reviewer';
const COOKIE = 'verikit_reviewer';
// The console's buttons change results: no framing (clickjacking), no script, forms only to itself.
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
};

const digest = (text: string) => createHash('sha256').update(text).digest();
/** Equal strings, compared in constant time whatever their lengths. */
const same = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));
/** The form token of an organization's console: derived from its secret, so a page of another origin cannot know it. */
const csrfToken = (org: FakeOrganization) =>
  createHmac('sha256', org.reviewerToken).update('verikit-fake reviewer form').digest('base64url');

const refusal = (title: string, message: string) => page(title, `<h1>${escapeHtml(title)}</h1><p id="error">${escapeHtml(message)}</p>`);

function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE) {
      try {
        return decodeURIComponent(value.join('='));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * A request the browser says comes from this origin, or a non-browser client's (which says nothing).
 * Sec-Fetch-Site first: under `Referrer-Policy: no-referrer` (these pages') a browser sends
 * `Origin: null` even from the same origin. Origin decides where Sec-Fetch-Site is not sent.
 */
function fromThisOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  const origin = req.headers.origin;
  return origin === undefined || (req.headers.host !== undefined && origin === `http://${req.headers.host}`);
}

/** Serves the reviewer console for the organizations of `state`. */
export function reviewerConsole(
  state: FakeState,
  webhooks: WebhookDispatcher,
): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  const byToken = (token: string | undefined) =>
    token === undefined || token === '' ? undefined : state.organizations.find((o) => same(o.reviewerToken, token));
  const send = (res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}) =>
    sendHtml(res, status, html, { ...SECURITY_HEADERS, ...headers });
  const unauthorized = (res: ServerResponse) =>
    send(
      res,
      401,
      refusal(
        'Reviewer console',
        'Open the reviewer link verikit-fake printed (fake.reviewerUrl in code): it carries the console token once.',
      ),
    );

  const items = (org: FakeOrganization): Pick<ReviewerView, 'cases' | 'sessions'> => {
    const { cases, sessions } = state.itemsOf(org.id);
    return {
      cases: cases.map(({ details, history }) => ({
        refId: details.refId,
        status: details.status,
        history,
        steps: details.steps.map(({ id, title }) => ({ id, title })),
      })),
      sessions: sessions.map(({ refId, result, history }) => ({ refId, status: result.status, history, steps: [] })),
    };
  };

  /** Carries out one form's action for `org`; bad input throws InvalidArgumentError. */
  const act = (org: FakeOrganization, form: URLSearchParams) => {
    const action = form.get('do') ?? '';
    const refId = form.get('refId') ?? '';
    const reason = form.get('reason')?.trim() || undefined;
    if (action === 'webhooks-down' || action === 'webhooks-up') return webhooks.setDown(org.id, action === 'webhooks-down');
    const kind = form.get('kind');
    if (action === 'reopen' && kind === 'kyb') {
      const stepId = form.get('stepId');
      if (!stepId) throw new InvalidArgumentError('Choose the step to reopen.');
      return void state.reopenCase(refId, [stepId], reason, org.id);
    }
    if (action.startsWith('decide:')) {
      const status = action.slice('decide:'.length);
      if (kind === 'kyc') return void state.decideSession(refId, status, reason, org.id);
      if (kind === 'kyb' && (status === 'COMPLETED' || status === 'REJECTED')) return void state.decideCase(refId, status, reason, org.id);
    }
    throw new InvalidArgumentError('Unknown action.');
  };

  return async (req, res, url) => {
    const path = url.pathname.replace(/\/$/, '');
    if (req.method === 'GET' && path === REVIEWER_PATH) {
      const given = url.searchParams.get('token');
      if (given !== null) {
        if (!byToken(given)) return unauthorized(res);
        // Into a cookie and out of the address bar (history, screenshots, a Referer): the token is shown once.
        res.writeHead(303, {
          location: REVIEWER_PATH,
          'set-cookie': `${COOKIE}=${encodeURIComponent(given)}; Path=${REVIEWER_PATH}; HttpOnly; SameSite=Strict`,
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        });
        res.end();
        return;
      }
      const org = byToken(cookieToken(req));
      if (!org) return unauthorized(res);
      return send(
        res,
        200,
        reviewerPage({
          organization: org.id,
          csrf: csrfToken(org),
          webhooks: { down: webhooks.isDown(org.id), endpoints: webhooks.endpointsOf(org.id) },
          ...items(org),
          kyc: state.kycStatuses,
        }),
      );
    }
    if (req.method === 'POST' && path === `${REVIEWER_PATH}/action`) {
      const org = byToken(cookieToken(req));
      if (!org) return unauthorized(res);
      const form = new URLSearchParams(await readBody(req));
      if (!fromThisOrigin(req) || !same(form.get('csrf') ?? '', csrfToken(org)))
        return send(res, 403, refusal('Refused', 'This form did not come from the reviewer console (cross-site request refused).'));
      try {
        act(org, form);
      } catch (error) {
        if (error instanceof InvalidArgumentError) return send(res, 400, refusal('Not done', error.message));
        throw error;
      }
      res.writeHead(303, { location: REVIEWER_PATH, 'cache-control': 'no-store' });
      res.end();
      return;
    }
    return send(res, 404, refusal('Not found', 'The reviewer console is at /reviewer.'));
  };
}
