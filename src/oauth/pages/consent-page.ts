/** The consent step: which client asks, where its answer goes, what it may do, and allow or deny. */
import { html, page } from './html.js';

export interface ConsentView {
  action: string;
  clientName: string;
  /** Where the answer goes (the redirect URI's host), and the client's own address when it has one. */
  redirectHost: string;
  clientIdUrl?: string;
  /** The redirect goes to this computer (a loopback address). */
  localRedirect: boolean;
  accountEmail: string;
  scopes: { name: string; description: string }[];
}

export function consentPage(view: ConsentView): string {
  return page(
    'Allow access',
    html`<h1><span class="client">${view.clientName}</span> asks to use your <span class="nowrap">agent-context</span> account</h1>
<dl class="facts">
<div><dt>Signed in as</dt><dd><strong>${view.accountEmail}</strong></dd></div>
<div><dt>Answer goes to</dt><dd class="host">${view.redirectHost}</dd></div>
${view.clientIdUrl ? html`<div><dt>Described at</dt><dd class="host">${view.clientIdUrl}</dd></div>` : ''}
</dl>
${
  view.localRedirect
    ? html`<p class="message warning" role="note">The answer goes to a program on this computer (a localhost
address). Allow only if you started ${view.clientName} here yourself just now.</p>`
    : ''
}
<h2>It will be able to</h2>
<ul class="scopes">${view.scopes.map((scope) => html`<li><strong>${scope.name}</strong>: ${scope.description}</li>`)}</ul>
<p class="hint">What it spends comes from this account's balance. The console lists the clients you allowed
and revokes any of them.</p>
<form method="post" action="${view.action}">
<div class="actions">
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  );
}
