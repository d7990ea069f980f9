// The hosted verification page stand-in (the person's side): the token, public key and environment
// checked as the service would, the form, and the person's one decision.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpUrl } from './checks.js';
import { hostedAlreadyFinished, hostedError, hostedPage } from './hosted-page.js';
import { readBody, sendHtml } from './http.js';
import { verifyJwt } from './jwt.js';
import type { FakeState } from './state.js';

/** What the hosted page needs of the fake. */
export interface HostedRouteOptions {
  state: FakeState;
  /** The key the session tokens are signed with. */
  jwtKey: Buffer;
  /** The environment links must name (any case). */
  environment: 'Sandbox' | 'Production';
  /** Where the person goes back to, when configured. */
  returnUrl: string | undefined;
  /** The fake's own origin (known once it listens). */
  origin: () => string;
}

/** Serves `GET {webUrl}/?authToken&publicKey&environment` and the decision its form posts. */
export function hostedRoute(options: HostedRouteOptions): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  const { state, jwtKey, environment, returnUrl, origin } = options;
  const kycStatuses = state.kycStatuses;
  const statusOf = (kind: 'kyb' | 'kyc', refId: string, org: string): string | undefined =>
    kind === 'kyb' ? state.getCase(org, refId)?.status : state.getSession(org, refId)?.result.status;

  /**
   * Where to send the person back to: the configured `returnUrl`, else a `returnTo` or `Referer` of
   * the fake's own origin. A foreign one would make the page an open redirect (a phishing link with
   * the service's name on it), and a non-http(s) one could run script from the link.
   */
  const returnTarget = (returnTo: string | null, referer: string | undefined): string | undefined => {
    if (returnUrl !== undefined) return returnUrl;
    for (const candidate of [returnTo, referer]) {
      const parsed = httpUrl(candidate);
      if (parsed !== undefined && parsed.origin === origin()) return parsed.href;
    }
    return undefined;
  };

  return async (req, res, url) => {
    const isPost = req.method === 'POST' && url.pathname === '/hosted/decision';
    const params = isPost ? new URLSearchParams(await readBody(req)) : url.searchParams;
    const returnTo = returnTarget(params.get('returnTo'), req.headers.referer);
    const token = params.get('authToken') ?? '';
    const claims = verifyJwt(token, jwtKey, Math.floor(Date.now() / 1000));
    if (!claims) return sendHtml(res, 401, hostedError('The verification token is missing, invalid or expired.'));
    const org = state.organizations.find((o) => o.id === claims.org);
    if (!org || params.get('publicKey') !== org.publicKey)
      return sendHtml(res, 403, hostedError('The public key does not match this verification.'));
    // Any case, as the core reads VERIKIT_ENVIRONMENT: the service writes `Sandbox`, the SDK and verikit-fake's output `sandbox`.
    if ((params.get('environment') ?? '').toLowerCase() !== environment.toLowerCase())
      return sendHtml(res, 403, hostedError(`This link is for another environment (expected ${environment}).`));
    // The person's part ends once they decided or sent it for review: from then on only a reviewer changes it.
    const finished = (status: string) =>
      claims.kind === 'kyb' ? status === 'COMPLETED' || status === 'REJECTED' || status === 'IN_REVIEW' : status !== kycStatuses.initial;
    if (isPost) {
      const decision = params.get('decision');
      if (decision !== 'approve' && decision !== 'reject' && decision !== 'review')
        return sendHtml(res, 400, hostedError('Unknown decision.'));
      const current = statusOf(claims.kind, claims.sub, org.id);
      if (current === undefined) return sendHtml(res, 404, hostedError('No such session.'));
      // A page opened before the decision (another tab) must not overturn it.
      if (finished(current)) return sendHtml(res, 409, hostedAlreadyFinished(current, returnTo));
      if (claims.kind === 'kyb') {
        const entered = (name: string) => params.get(name) || undefined;
        state.submitCase(
          claims.sub,
          {
            businessName: entered('businessName'),
            registrationNumber: entered('registrationNumber'),
            website: entered('website'),
            ownerName: entered('ownerName'),
            // A rejection has its reason in the data, as a reviewer's would: an AML hit.
            outcome: decision === 'reject' ? 'flagged' : 'clear',
          },
          org.id,
          // The fake decides at once from the button; one change, as one submission is.
          decision === 'approve' ? 'COMPLETED' : decision === 'reject' ? 'REJECTED' : 'IN_REVIEW',
        );
      } else {
        state.setSessionStatus(
          claims.sub,
          decision === 'approve' ? kycStatuses.approved : decision === 'reject' ? kycStatuses.rejected : kycStatuses.review,
          org.id,
          decision === 'reject' ? { reason: 'The identity document has expired' } : {},
          'submitted',
        );
      }
      // Back to the page (303: the browser follows with GET), which now shows the outcome.
      const query = { authToken: token, publicKey: org.publicKey, environment, ...(returnTo ? { returnTo } : {}) };
      res.writeHead(303, { location: `/hosted/?${new URLSearchParams(query)}`, 'cache-control': 'no-store' });
      res.end();
      return;
    }
    let status = statusOf(claims.kind, claims.sub, org.id);
    if (status === undefined) return sendHtml(res, 404, hostedError('No such session.'));
    // Opening the portal starts the case, as the business starting the flow would.
    if (claims.kind === 'kyb' && status === 'NOT_STARTED') status = state.setCaseStatus(claims.sub, 'IN_PROGRESS', org.id).status;
    const done = finished(status);
    sendHtml(
      res,
      200,
      hostedPage({
        kind: claims.kind,
        refId: claims.sub,
        status,
        token,
        publicKey: org.publicKey,
        environment,
        actionPath: '/hosted/decision',
        done,
        returnTo,
        prefill: claims.kind === 'kyb' ? state.prefillFor(org.id, claims.sub) : {},
      }),
    );
  };
}
