import { escapeHtml, page } from './html.js';
import type { KybPrefill } from './state.js';

/** What the page shows about the session its token opens. */
export interface HostedView {
  kind: 'kyb' | 'kyc';
  refId: string;
  status: string;
  token: string;
  publicKey: string;
  environment: string;
  actionPath: string;
  done: boolean;
  /** Where the person goes back to after deciding (an http(s) URL), if known. */
  returnTo?: string;
  /** What the business form starts with. */
  prefill?: KybPrefill;
}

/** The hosted verification page stand-in: who is being verified, the business's details, and buttons a person or a browser test can press. */
export function hostedPage(view: HostedView): string {
  const what = view.kind === 'kyb' ? 'business' : 'identity';
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  const button = (decision: string, label: string) =>
    `<button type="submit" name="decision" value="${decision}" data-decision="${decision}">${escapeHtml(label)}</button>`;
  const field = (name: keyof KybPrefill, label: string, fallback: string) =>
    `<label>${escapeHtml(label)} <input name="${name}" value="${escapeHtml(view.prefill?.[name] ?? fallback)}"></label>`;
  const back = wayBack(view.returnTo);
  const form = view.done
    ? `<p id="done">Verification finished: <strong data-status>${escapeHtml(view.status)}</strong>.</p>${back}`
    : `<form method="post" action="${escapeHtml(view.actionPath)}">
      ${hidden('authToken', view.token)}${hidden('publicKey', view.publicKey)}${hidden('environment', view.environment)}${view.returnTo ? hidden('returnTo', view.returnTo) : ''}
      ${
        view.kind === 'kyb'
          ? `${field('businessName', 'Business name', 'Acme Trading Ltd')}${field('registrationNumber', 'Registration number', '09876543')}${field('website', 'Website', '')}${field('ownerName', 'Beneficial owner', 'Jane Doe')}`
          : ''
      }
      <p class="note">A fake: the decision is yours. "Reject" gives the ${what} a reason a reviewer would have (${view.kind === 'kyb' ? 'an AML screening hit' : 'an expired document'}).</p>
      <p>${button('approve', 'Approve')} ${button('reject', 'Reject')} ${button('review', 'Send for review')}</p>
    </form>`;
  return page(
    `Verify your ${what} (fake)`,
    `<h1>Verify your ${what}</h1>
<p>Fake verification service (${escapeHtml(view.environment)}). Reference <code data-ref>${escapeHtml(view.refId)}</code>, status <strong data-status>${escapeHtml(view.status)}</strong>.</p>
${form}`,
  );
}

/** The link back to where the person came from, or a line saying they can close the page. */
function wayBack(returnTo: string | undefined): string {
  return returnTo
    ? `<p><a class="button" id="return" href="${escapeHtml(returnTo)}">Return to ${escapeHtml(new URL(returnTo).host)}</a></p>`
    : '<p>You can close this page.</p>';
}

/** The answer to a decision sent from a page opened before the verification finished (an old tab): nothing was changed. */
export function hostedAlreadyFinished(status: string, returnTo: string | undefined): string {
  return page(
    'Verification already finished',
    `<h1>Verification already finished</h1>
<p id="finished">This verification is already finished (status <strong data-status>${escapeHtml(status)}</strong>): the decision from this page was not applied.</p>
${wayBack(returnTo)}`,
  );
}

/** A short HTML page for a refused link. */
export function hostedError(message: string): string {
  return page('Link not valid', `<h1>This link is not valid</h1><p id="error">${escapeHtml(message)}</p>`);
}
