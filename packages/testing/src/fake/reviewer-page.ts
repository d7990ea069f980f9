import type { FakeHistoryEntry } from './history.js';
import { escapeHtml, page } from './html.js';

/** A case or session as the console lists it. */
export interface ReviewerItem {
  refId: string;
  status: string;
  history: readonly FakeHistoryEntry[];
  /** The KYB steps a reopen can name (none for KYC). */
  steps: ReadonlyArray<{ id: string; title: string }>;
}

/** What the reviewer console shows. */
export interface ReviewerView {
  organization: string;
  /** The token every form carries (CSRF). */
  csrf: string;
  webhooks: { down: boolean; endpoints: readonly string[] };
  cases: readonly ReviewerItem[];
  sessions: readonly ReviewerItem[];
  /** The KYC statuses that are decisions. */
  kyc: { initial: string; approved: string; rejected: string };
}

const STYLE = `body{max-width:64rem}table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}
th,td{text-align:left;vertical-align:top;padding:.4rem;border-bottom:1px solid #dde}
form.row input,form.row select{width:auto;display:inline-block;margin:.2rem .3rem .2rem 0}
button{padding:.3rem .7rem;margin:.2rem .3rem .2rem 0}ol{margin:.3rem 0;padding-left:1.4rem;font-size:.85rem}
.off{color:#9a1b1b;font-weight:600}.on{color:#1b6a2e;font-weight:600}`;

const button = (action: string, label: string) =>
  `<button type="submit" name="do" value="${escapeHtml(action)}" data-action="${escapeHtml(action)}">${escapeHtml(label)}</button>`;

function historyList(history: readonly FakeHistoryEntry[]): string {
  const lines = history.map(
    (h) =>
      `<li data-version="${h.version}">v${h.version} ${escapeHtml(h.change)}: <strong>${escapeHtml(h.status)}</strong> <time>${escapeHtml(h.updatedAt)}</time>${h.reason ? ` (${escapeHtml(h.reason)})` : ''}</li>`,
  );
  return `<details><summary>History (${history.length})</summary><ol>${lines.join('')}</ol></details>`;
}

/** The buttons a KYB case's state offers: decide one in review, overturn a final one, reopen a step. */
function kybActions(item: ReviewerItem): string {
  const { status } = item;
  const decide =
    status === 'IN_REVIEW'
      ? button('decide:COMPLETED', 'Approve') + button('decide:REJECTED', 'Reject')
      : status === 'COMPLETED'
        ? button('decide:REJECTED', 'Overturn: reject')
        : status === 'REJECTED'
          ? button('decide:COMPLETED', 'Overturn: approve')
          : '';
  if (decide === '') return '<em>Waiting for the business.</em>';
  const steps = item.steps.map((s) => `<option value="${escapeHtml(s.id)}">${escapeHtml(s.title)}</option>`).join('');
  return `${decide}<label>Step <select name="stepId">${steps}</select></label>${button('reopen', 'Reopen step')}`;
}

/** The buttons a KYC session's state offers: decide one in review (or any status not a decision), overturn a final one. */
function kycActions(item: ReviewerItem, kyc: ReviewerView['kyc']): string {
  if (item.status === kyc.initial) return '<em>Waiting for the person.</em>';
  if (item.status === kyc.approved) return button(`decide:${kyc.rejected}`, 'Overturn: reject');
  if (item.status === kyc.rejected) return button(`decide:${kyc.approved}`, 'Overturn: approve');
  return button(`decide:${kyc.approved}`, 'Approve') + button(`decide:${kyc.rejected}`, 'Reject');
}

function table(kind: 'kyb' | 'kyc', items: readonly ReviewerItem[], csrf: string, actions: (item: ReviewerItem) => string): string {
  if (items.length === 0) return '<p><em>None yet.</em></p>';
  const rows = items.map((item) => {
    const last = item.history.at(-1);
    return `<tr data-kind="${kind}" data-ref="${escapeHtml(item.refId)}">
<td><code>${escapeHtml(item.refId)}</code></td><td><strong data-status>${escapeHtml(item.status)}</strong><br>v${last?.version ?? 0}, ${escapeHtml(last?.updatedAt ?? '')}${historyList(item.history)}</td>
<td><form class="row" method="post" action="/reviewer/action"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><input type="hidden" name="kind" value="${kind}"><input type="hidden" name="refId" value="${escapeHtml(item.refId)}">
<input name="reason" placeholder="Reason (optional)" aria-label="Reason">${actions(item)}</form></td></tr>`;
  });
  return `<table><tr><th>Reference</th><th>Status</th><th>Reviewer</th></tr>${rows.join('')}</table>`;
}

/** The reviewer console: the organization's cases and sessions, their histories, decisions, and the webhook switch. */
export function reviewerPage(view: ReviewerView): string {
  const { webhooks } = view;
  const hooks = `<form method="post" action="/reviewer/action"><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<p data-webhooks="${webhooks.down ? 'off' : 'on'}">Webhook deliveries: ${
    webhooks.down
      ? `<span class="off">off</span> (every attempt fails; Svix's retries go on) ${button('webhooks-up', 'Turn deliveries on')}`
      : `<span class="on">on</span> ${button('webhooks-down', 'Turn deliveries off')}`
  }</p></form>
<p>Endpoints: ${webhooks.endpoints.length === 0 ? '<em>none</em>' : webhooks.endpoints.map((e) => `<code>${escapeHtml(e)}</code>`).join(', ')}</p>`;
  return page(
    'Reviewer console (fake)',
    `<h1>Reviewer console</h1>
<p class="note">Fake verification service, organization <code>${escapeHtml(view.organization)}</code>. What a reviewer does here changes the case or session, adds a history version and sends its webhook.</p>
${hooks}
<h2>KYB cases</h2>${table('kyb', view.cases, view.csrf, kybActions)}
<h2>KYC sessions</h2>${table('kyc', view.sessions, view.csrf, (item) => kycActions(item, view.kyc))}`,
    STYLE,
  );
}
