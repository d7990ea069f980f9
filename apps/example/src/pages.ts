import { collectDocumentFiles, isFinal, type KybCaseDetails, type KybStep } from '@verikit/core';
import type { Account, VerificationState } from './db.js';

const esc = (value: unknown): string =>
  String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const show = (value: unknown): string =>
  value === null || value === undefined || value === ''
    ? '<em>empty</em>'
    : typeof value === 'object'
      ? `<code>${esc(JSON.stringify(value))}</code>`
      : esc(value);

function layout(title: string, mode: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · verikit example</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2430}
header{display:flex;justify-content:space-between;align-items:center;border-bottom:1px solid #dde;margin-bottom:1rem}
.mode{font-size:.8rem;background:#eef3ff;border-radius:1rem;padding:.1rem .7rem}
section{border:1px solid #dde;border-radius:.5rem;padding:1rem;margin:1rem 0}
.status{font-weight:700}.approved,.COMPLETED{color:#11772f}.rejected,.REJECTED{color:#b4231b}.pending{color:#8a6100}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #eef}
button{font:inherit;padding:.4rem .9rem;cursor:pointer}
</style></head><body>
<header><h1>verikit example</h1><span class="mode" data-mode>${esc(mode)}</span></header>
${body}
${script}
</body></html>`;
}

/** The sign-in stand-in: pick a person and a business. */
export function signInPage(mode: string): string {
  return layout(
    'Sign in',
    mode,
    `<section><h2>Sign in</h2>
<p>A stand-in for your own login: who is the person, and which business do they act for?</p>
<form method="post" action="/signin">
<p><label>Your name <input name="name" value="Jane Doe" required></label></p>
<p><label>Business <input name="business" value="Acme Trading Ltd" required></label></p>
<p><button type="submit">Sign in</button></p>
</form></section>`,
  );
}

function stepRows(step: KybStep): string {
  if ('fields' in step && Array.isArray(step.fields)) {
    return `<table>${(step.fields as Array<{ title: string; value: unknown; groupTitle?: string }>)
      .map((f) => `<tr><th>${esc(f.groupTitle ? `${f.groupTitle}: ${f.title}` : f.title)}</th><td>${show(f.value)}</td></tr>`)
      .join('')}</table>`;
  }
  if (step.type === 'document') {
    const files = collectDocumentFiles(step as Parameters<typeof collectDocumentFiles>[0]);
    return files.length === 0
      ? '<p><em>No documents.</em></p>'
      : `<ul>${files.map((f) => `<li><a href="/documents/${encodeURIComponent(f.id)}" data-document>${esc(f.originalName)}</a> (${esc(f.mimeType)}, ${f.size} bytes${f.analysis?.matches === undefined ? '' : f.analysis.matches ? ', matches' : ', does not match'})</li>`).join('')}</ul>`;
  }
  const entries = (step as Record<string, unknown>)[step.type === 'ubo' ? 'ubos' : 'relatedBusinesses'];
  return Array.isArray(entries)
    ? `<p>${entries.length} ${step.type === 'ubo' ? 'beneficial owner(s)' : 'related business(es)'}: ${show(entries)}</p>`
    : '';
}

function kybDetails(details: KybCaseDetails): string {
  const aml = [...details.amlScreening.primary, ...details.amlScreening.related];
  return `<p>Business name: <strong data-business-name>${esc(details.businessName)}</strong> · flow ${esc(details.flow.title ?? details.flow.id)} · risk flag ${esc(details.flagType ?? 'n/a')}</p>
${details.steps.map((step) => `<h4>${esc(step.title)} <small>(${esc(step.type)})</small></h4>${stepRows(step)}`).join('')}
<h4>AML screening</h4>
${aml.length === 0 ? '<p><em>None.</em></p>' : `<table><tr><th>Name</th><th>Role</th><th>Status</th><th>Hits</th><th>Monitoring</th></tr>${aml.map((a) => `<tr><td>${esc(a.name ?? a.businessName)}</td><td>${esc(a.businessRole)}</td><td>${esc(a.status)}</td><td>${esc(a.totalHits ?? '')}</td><td>${a.ongoingMonitoring ? 'on' : 'off'}</td></tr>`).join('')}</table>`}
${details.websiteAnalysis ? `<p>Website ${esc(details.websiteAnalysis.domain)}: ${esc(details.websiteAnalysis.status)}</p>` : ''}
<h4>Reopen history</h4>
${details.reopenHistory.length === 0 ? '<p><em>Never reopened.</em></p>' : `<ul>${details.reopenHistory.map((r) => `<li>${esc(r.reopenedAt)}: steps ${esc(r.stepIds.join(', '))}${r.reason ? `, ${esc(r.reason)}` : ''}</li>`).join('')}</ul>`}`;
}

/** The dashboard of the signed-in party's verifications; refreshes itself when a webhook lands. */
export function dashboardPage(
  mode: string,
  account: Account,
  kyc: VerificationState['kyc'],
  kyb: VerificationState['kyb'],
  version: number,
): string {
  const kycBlock = kyc
    ? `<p>Status <span class="status ${esc(kyc.decision)}" data-kyc-status>${esc(kyc.status)}</span> · <span class="${esc(kyc.decision)}" data-kyc-decision>${esc(kyc.decision)}</span> · updated ${esc(kyc.updatedAt.toISOString())}</p>`
    : '<p data-kyc-status>Not verified yet.</p>';
  const kybStatus = kyb?.details.status;
  const kybBlock = kyb
    ? `<p>Status <span class="status ${esc(kybStatus)}" data-kyb-status>${esc(kybStatus)}</span>${isFinal(kybStatus as string) ? '' : ' · in progress'} · updated ${esc(kyb.updatedAt.toISOString())}</p>${isFinal(kybStatus as string) ? kybDetails(kyb.details) : ''}`
    : '<p data-kyb-status>Not verified yet.</p>';
  return layout(
    'Dashboard',
    mode,
    `<p>Signed in as <strong>${esc(account.name)}</strong> for <strong>${esc(account.businessName)}</strong>. <form method="post" action="/signout" style="display:inline"><button type="submit">Sign out</button></form></p>
<section><h2>Your identity (KYC)</h2><p><small>refId ${esc(account.userRefId)}</small></p>${kycBlock}
<form method="post" action="/verikit/invite/kyc"><button type="submit" data-verify="kyc">Verify my identity</button></form></section>
<section><h2>Your business (KYB)</h2><p><small>refId ${esc(account.businessRefId)}</small></p>${kybBlock}
<form method="post" action="/verikit/invite/kyb"><button type="submit" data-verify="kyb">Verify my business</button></form></section>`,
    `<script>
// Refresh when a webhook has changed anything (the server bumps a version number).
const seen = ${version};
setInterval(async () => {
  const r = await fetch('/dashboard/version', { cache: 'no-store' }).catch(() => null);
  if (r && r.ok && Number(await r.text()) !== seen) location.reload();
}, 1000);
</script>`,
  );
}
