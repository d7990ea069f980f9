import { type AmlSummary, collectDocumentFiles, type DeadLetter, isFinal, type KybCaseDetails, type KybStep } from '@verikit/core';
import type { Account, ChangeRecord, KybState, KycState, Provenance } from './db.js';

/**
 * JSON for inside an inline `<script>`: `JSON.stringify` leaves `</script>` (and `<!--`) as they
 * are, so a value carrying one would end the script and start markup; escaped as `\u003c` it is
 * the same string to JavaScript and nothing to the HTML parser.
 */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const esc = (value: unknown): string =>
  String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** A timestamp the browser shows in its own time zone (the server does not know it). */
const when = (value: Date | string | null | undefined): string => {
  if (value === null || value === undefined || value === '') return '<em>unknown</em>';
  const iso = new Date(value).toISOString();
  return `<time datetime="${iso}" data-local>${iso.replace('T', ' ').slice(0, 16)} UTC</time>`;
};

/** The favicon: a small shield, as SVG (also served at /favicon.ico). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 6v9c0 7.5 5 12.5 12 15 7-2.5 12-7.5 12-15V6z" fill="#2d5bd7"/><path d="m10 16 4 4 8-9" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>`;

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:62rem;margin:1.5rem auto;padding:0 1rem;color:#1d2430;background:#fbfcfe}
header{display:flex;justify-content:space-between;align-items:center;border-bottom:1px solid #dde;margin-bottom:1rem;gap:1rem}
header h1{font-size:1.3rem;margin:.5rem 0}header h1 a{color:inherit;text-decoration:none}
.mode{font-size:.8rem;background:#eef3ff;border-radius:1rem;padding:.1rem .7rem}
section{border:1px solid #dde;border-radius:.6rem;padding:.5rem 1.2rem 1rem;margin:1rem 0;background:#fff}
.badge{display:inline-block;font-weight:700;border-radius:1rem;padding:.05rem .7rem;font-size:.9rem;background:#f1f1f4}
.approved,.COMPLETED{background:#e3f5e8;color:#11652a}.rejected,.REJECTED{background:#fde8e6;color:#a5231b}
.pending,.IN_PROGRESS,.IN_REVIEW,.NOT_STARTED{background:#fff4d9;color:#7a5600}
.reason{border-left:4px solid #c4372e;background:#fff6f5;padding:.4rem .8rem;margin:.6rem 0}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eef;vertical-align:top}
th{font-weight:600;color:#445}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{color:#556}dd{margin:0}
button{font:inherit;white-space:nowrap;padding:.45rem 1rem;cursor:pointer;border-radius:.4rem;border:1px solid #2d5bd7;background:#2d5bd7;color:#fff}
button.quiet{background:#fff;color:#2d5bd7}small,.muted{color:#667}input{font:inherit;padding:.35rem;border:1px solid #bbc;border-radius:.3rem}
.hit,.missed-webhook{color:#a5231b;font-weight:600}.webhook{color:#11652a}details{margin:.4rem 0}.who{display:flex;align-items:center;gap:.5rem;flex-wrap:wrap}.who form{margin-left:auto}
td,dd{overflow-wrap:anywhere}
@media (max-width:40rem){table.stack thead{display:none}table.stack,table.stack tbody,table.stack tr,table.stack td{display:block}
table.stack tr{border-bottom:1px solid #dde;padding:.3rem 0}table.stack td{border:0;padding:.1rem 0}
table.stack td::before{content:attr(data-label) ": ";font-weight:600;color:#445}}`;

function layout(title: string, mode: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · verikit example</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<style>${STYLE}</style></head><body>
<header><h1><a href="/">verikit example</a></h1><span class="mode" data-mode>${esc(mode)}</span></header>
${body}
<script>document.querySelectorAll('time[data-local]').forEach((t) => { t.textContent = new Date(t.dateTime).toLocaleString(); });</script>
${script}
</body></html>`;
}

/** The sign-in stand-in: pick a person and a business. */
export function signInPage(mode: string, problem?: string): string {
  return layout(
    'Sign in',
    mode,
    `<section><h2>Sign in</h2>
<p>A stand-in for your own login: who is the person, and which business do they act for?</p>
${problem ? `<p class="reason" role="alert">${esc(problem)}</p>` : ''}
<form method="post" action="/signin">
<p><label>Your name <input name="name" value="Jane Doe" maxlength="100" required></label></p>
<p><label>Business <input name="business" value="Acme Trading Ltd" maxlength="100" required></label></p>
<p><button type="submit">Sign in</button></p>
</form></section>`,
  );
}

/** A styled error page for the app's own failures (unknown page, no such document, a broken upstream). */
export function errorPage(mode: string, status: number, title: string, message: string): string {
  return layout(
    title,
    mode,
    `<section data-error="${status}"><h2>${esc(title)}</h2><p>${esc(message)}</p><p><a href="/">Back to the start</a></p></section>`,
  );
}

const percent = (value: unknown) => (typeof value === 'number' ? ` (${value} %)` : '');
const nameOf = (entry: unknown) => esc((entry as { name?: unknown })?.name ?? JSON.stringify(entry));

function formRows(step: KybStep): string {
  const fields = (step as { fields?: Array<{ title: string; value: unknown; groupTitle?: string }> }).fields ?? [];
  return `<dl>${fields
    .map(
      (f) =>
        `<dt>${esc(f.groupTitle ? `${f.groupTitle}: ${f.title}` : f.title)}</dt><dd>${f.value === null || f.value === '' ? '<em>empty</em>' : esc(typeof f.value === 'object' ? JSON.stringify(f.value) : f.value)}</dd>`,
    )
    .join('')}</dl>`;
}

function stepBody(step: KybStep): string {
  if (step.type === 'document') {
    const files = collectDocumentFiles(step as Parameters<typeof collectDocumentFiles>[0]);
    return files.length === 0
      ? '<p><em>No documents.</em></p>'
      : `<ul>${files
          .map(
            (f) =>
              `<li><a href="/documents/${encodeURIComponent(f.id)}" target="_blank" data-document>${esc(f.originalName)}</a> <small>${esc(f.mimeType)}, ${Math.ceil(f.size / 1024)} KB${f.analysis?.matches === false ? ', <span class="hit">does not match the details given</span>' : ''} · <a href="/documents/${encodeURIComponent(f.id)}?download=1" data-download>download</a></small></li>`,
          )
          .join('')}</ul>`;
  }
  if (step.type === 'ubo') {
    const owners = (step as { ubos?: unknown[] }).ubos ?? [];
    return owners.length === 0
      ? '<p><em>None declared.</em></p>'
      : `<ul data-owners>${owners.map((o) => `<li>${nameOf(o)}${percent((o as { ownership?: unknown }).ownership)}</li>`).join('')}</ul>`;
  }
  if (step.type === 'relatedBusinesses') {
    const related = (step as { relatedBusinesses?: unknown[] }).relatedBusinesses ?? [];
    return related.length === 0 ? '<p><em>None.</em></p>' : `<ul data-related>${related.map((r) => `<li>${nameOf(r)}</li>`).join('')}</ul>`;
  }
  return formRows(step);
}

const hasHit = (a: AmlSummary) => (a.totalHits ?? 0) > 0 || !['CLEAR', 'NO_MATCH'].includes(String(a.status));

/** Why a case was rejected, as far as its data says: AML hits and documents that did not match. */
export function rejectionReasons(details: KybCaseDetails): string[] {
  const reasons = [...details.amlScreening.primary, ...details.amlScreening.related]
    .filter(hasHit)
    .map(
      (a) =>
        `AML screening of ${a.name ?? a.businessName}: ${a.totalHits ?? 'some'} potential match(es) (${a.sourceType ?? 'lists'}, ${a.status})`,
    );
  for (const step of details.steps) {
    if (step.type !== 'document') continue;
    for (const f of collectDocumentFiles(step as Parameters<typeof collectDocumentFiles>[0])) {
      if (f.analysis?.matches === false) reasons.push(`${f.originalName} does not match the details given`);
    }
  }
  return reasons;
}

/** A table cell's markup, with a class when it has one. */
type Cell = string | { html: string; className: string | undefined };

/** A table that turns into labelled rows on a narrow screen (a phone): each cell then says its column. */
function stackTable(attributes: string, headings: string[], rows: Cell[][]): string {
  const cell = (c: Cell, i: number) => {
    const { html, className } = typeof c === 'string' ? { html: c, className: undefined } : c;
    return `<td data-label="${esc(headings[i])}"${className ? ` class="${className}"` : ''}>${html}</td>`;
  };
  return `<table class="stack" ${attributes}><thead><tr>${headings.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((row) => `<tr>${row.map(cell).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function kybDetails(details: KybCaseDetails): string {
  const aml = [...details.amlScreening.primary, ...details.amlScreening.related];
  return `<p>Business <strong data-business-name>${esc(details.businessName)}</strong> · flow ${esc(details.flow.title ?? details.flow.id)}${details.flagType && details.flagType !== 'NONE' ? ` · flagged <span class="hit">${esc(details.flagType)}</span>` : ''}</p>
${details.steps.map((step) => `<h4>${esc(step.title)}</h4>${stepBody(step)}`).join('')}
<h4>AML screening</h4>
${
  aml.length === 0
    ? '<p><em>None.</em></p>'
    : stackTable(
        'data-aml',
        ['Name', 'Role', 'Result', 'Screened', 'Monitoring'],
        aml.map((a) => [
          esc(a.name ?? a.businessName),
          esc(a.businessRole),
          { html: `${esc(a.status)}${a.totalHits ? ` · ${esc(a.totalHits)} hit(s)` : ''}`, className: hasHit(a) ? 'hit' : undefined },
          when(a.createdAt),
          a.ongoingMonitoring ? 'on' : 'off',
        ]),
      )
}
${details.websiteAnalysis ? `<h4>Website</h4><p>${esc(details.websiteAnalysis.domain)}: ${esc(details.websiteAnalysis.status)}</p>` : ''}
${details.reopenHistory.length === 0 ? '' : `<h4>Reopened</h4><ul>${details.reopenHistory.map((r) => `<li>${when(r.reopenedAt)}: ${esc(r.stepIds.join(', '))}${r.reason ? `, ${esc(r.reason)}` : ''}</li>`).join('')}</ul>`}`;
}

const KYC_LABEL = { approved: 'Approved', rejected: 'Rejected', pending: 'In progress' } as const;
const KYB_LABEL: Record<string, string> = {
  NOT_STARTED: 'Not started',
  IN_PROGRESS: 'In progress',
  IN_REVIEW: 'Under review',
  COMPLETED: 'Verified',
  REJECTED: 'Rejected',
};

const action = (kind: 'kyb' | 'kyc', label: string) =>
  `<form method="post" action="/verikit/invite/${kind}"><button type="submit" data-verify="${kind}">${esc(label)}</button></form>`;

/** Where a status came from, in words and as a `data-source` for tests: a webhook, or the reconciler's polling. */
function sourceOf(p: Provenance): { words: string; key: string } {
  if (p.source === 'webhook') return { words: 'via webhook', key: 'webhook' };
  return p.missedWebhook
    ? { words: 'found by polling: a webhook was missed', key: 'missed-webhook' }
    : { words: 'found by polling (its first check)', key: 'polling' };
}

const provenance = (p: Provenance) => {
  const { words, key } = sourceOf(p);
  return `<span class="${key}" data-source="${key}">${esc(words)}</span>, ${when(p.at)}`;
};

/** Every change the app recorded, oldest first, each with where it came from. */
function historyList(history: ChangeRecord[]): string {
  const items = history.map((c) => `<li data-version="${c.version}"><code>${esc(c.status)}</code> ${provenance(c)}</li>`);
  return `<details data-history><summary>How it got here (${history.length} ${history.length === 1 ? 'change' : 'changes'})</summary><ol>${items.join('')}</ol></details>`;
}

function kycSection(kyc: KycState | undefined): string {
  if (!kyc) return `<p><span class="badge" data-kyc-status>Not verified yet</span></p>${action('kyc', 'Verify my identity')}`;
  const final = kyc.decision !== 'pending';
  return `<p><span class="badge ${esc(kyc.decision)}" data-kyc-decision="${esc(kyc.decision)}">${KYC_LABEL[kyc.decision]}</span> <small>service status <code data-kyc-status>${esc(kyc.status)}</code> · ${provenance(kyc.provenance)}</small></p>
${kyc.decision === 'rejected' ? `<p class="reason" data-reason>Reason: ${esc(kyc.reason ?? 'the service gave none')}</p>` : ''}
${historyList(kyc.history)}
${final ? '<p class="muted">This result is final.</p>' : action('kyc', 'Continue verification')}`;
}

function kybSection(kyb: KybState | undefined): string {
  if (!kyb) return `<p><span class="badge" data-kyb-status>Not verified yet</span></p>${action('kyb', 'Verify my business')}`;
  const { status } = kyb.details;
  const final = isFinal(status);
  const reasons = status === 'REJECTED' ? rejectionReasons(kyb.details) : [];
  return `<p><span class="badge ${esc(status)}" data-kyb-status="${esc(status)}">${esc(KYB_LABEL[status] ?? status)}</span> <small>${provenance(kyb.provenance)}</small></p>
${status === 'REJECTED' ? `<div class="reason" data-reason><strong>Why:</strong> ${reasons.length === 0 ? 'the service gave no reason in the case data' : `<ul>${reasons.map((r) => `<li>${esc(r)}</li>`).join('')}</ul>`}</div>` : ''}
${historyList(kyb.history)}
${final ? kybDetails(kyb.details) : status === 'IN_REVIEW' ? '<p class="muted">A reviewer is looking at it; nothing to do now.</p>' : action('kyb', 'Continue verification')}`;
}

/** The embedded fake's reviewer console: the service's side, to play by hand (never shown against the real service). */
const reviewerSection = (url: string) => `<section data-section="service"><h2>The service’s side (embedded fake)</h2>
<p>Play the verification service’s reviewer in the <a href="${esc(url)}" target="_blank" rel="noopener" data-reviewer-console>reviewer console</a>: finish a case left in review, reopen a step, overturn a decision, and turn webhook deliveries off and on.</p>
<p class="muted">With deliveries off, a result still reaches this page: the reconciler reads each verification from the service on a schedule (often while it is pending, daily for a month once final) and marks what it finds “found by polling: a webhook was missed”.</p></section>`;

/** Everything the dashboard shows. */
export interface DashboardView {
  mode: string;
  account: Account;
  kyc: KycState | undefined;
  kyb: KybState | undefined;
  /** This account's change marker: the page reloads when it changes. */
  stamp: string;
  /** The embedded fake's reviewer console, or undefined against the real service. */
  reviewerUrl: string | undefined;
}

/** The signed-in party's verifications; it refreshes itself when their own results change, and only then. */
export function dashboardPage(view: DashboardView): string {
  const { account } = view;
  return layout(
    'Dashboard',
    view.mode,
    `<div class="who">Signed in as <strong>${esc(account.name)}</strong> for <strong>${esc(account.businessName)}</strong>. <form method="post" action="/signout"><button type="submit" class="quiet">Sign out</button></form></div>
<section data-section="kyc"><h2>Your identity (KYC)</h2>${kycSection(view.kyc)}</section>
<section data-section="kyb"><h2>Your business (KYB)</h2>${kybSection(view.kyb)}</section>
${view.reviewerUrl === undefined ? '' : reviewerSection(view.reviewerUrl)}`,
    `<script>
// Refresh when this account's results change (another user's webhook does not touch this page).
const seen = ${scriptJson(view.stamp)};
setInterval(async () => {
  const r = await fetch('/dashboard/state', { cache: 'no-store' }).catch(() => null);
  if (r && r.ok && (await r.text()) !== seen) location.reload();
}, 1000);
</script>`,
  );
}

/** The operator's sign-in: the secret from `VERIKIT_EXAMPLE_OPERATOR_SECRET`. */
export function operatorSignInPage(mode: string, problem?: string): string {
  return layout(
    'Operator sign-in',
    mode,
    `<section><h2>Operator sign-in</h2>
<p>The operations panel shows every business's failed deliveries: it is for whoever runs this app.</p>
${problem ? `<p class="reason" role="alert">${esc(problem)}</p>` : ''}
<form method="post" action="/operations/signin">
<p><label>Operator secret <input type="password" name="secret" autocomplete="current-password" required></label></p>
<p><button type="submit">Sign in</button></p>
</form></section>`,
  );
}

/** The operator's panel: webhook deliveries the worker gave up on, each with a replay button. */
export function operationsPage(mode: string, deadLetters: DeadLetter[]): string {
  return layout(
    'Operations',
    mode,
    `<div class="who">Signed in as the operator. <form method="post" action="/operations/signout"><button type="submit" class="quiet">Sign out</button></form></div>
<section data-operations><h2>Operations</h2>
<p class="muted">Webhook deliveries the worker gave up on after its retries.</p>
${
  deadLetters.length === 0
    ? '<p data-dead-letters="0">No failed deliveries.</p>'
    : stackTable(
        `data-dead-letters="${deadLetters.length}"`,
        ['Delivery', 'Attempts', 'Last error', 'Received', 'Replay'],
        deadLetters.map((d) => [
          `<code>${esc(d.id)}</code>`,
          String(d.attempts),
          esc(d.lastError ?? ''),
          when(d.receivedAt),
          `<form method="post" action="/operations/dead-letters/${encodeURIComponent(d.id)}/replay"><button type="submit" class="quiet" data-replay>Replay</button></form>`,
        ]),
      )
}</section>`,
  );
}
