const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

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
}

/** The hosted verification page stand-in: who is being verified, and buttons a person or a browser test can press. */
export function hostedPage(view: HostedView): string {
  const what = view.kind === 'kyb' ? 'business' : 'identity';
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  const button = (decision: string, label: string) =>
    `<button type="submit" name="decision" value="${decision}" data-decision="${decision}">${escapeHtml(label)}</button>`;
  const form = view.done
    ? `<p id="done">Verification finished: <strong data-status>${escapeHtml(view.status)}</strong>. You can close this page.</p>`
    : `<form method="post" action="${escapeHtml(view.actionPath)}">
      ${hidden('authToken', view.token)}${hidden('publicKey', view.publicKey)}${hidden('environment', view.environment)}
      ${view.kind === 'kyb' ? '<label>Business name <input name="businessName" value="Acme Trading Ltd"></label>' : ''}
      <p>${button('approve', 'Approve')} ${button('reject', 'Reject')} ${button('review', 'Send for review')}</p>
    </form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Verify your ${what} (fake)</title>
<meta name="referrer" content="no-referrer">
<style>body{font:16px system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1rem;margin-right:.5rem}</style>
</head><body>
<h1>Verify your ${what}</h1>
<p>Fake verification service (${escapeHtml(view.environment)}). Reference <code data-ref>${escapeHtml(view.refId)}</code>, status <strong data-status>${escapeHtml(view.status)}</strong>.</p>
${form}
</body></html>`;
}

/** A short HTML page for a refused link. */
export function hostedError(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Link not valid</title></head><body><h1>This link is not valid</h1><p id="error">${escapeHtml(message)}</p></body></html>`;
}
