/** The sign-in step: the account's API key, or a new account made with an e-mail address. */
import { html, page } from './html.js';

export interface SignInView {
  action: { signIn: string; register: string };
  clientName: string;
  /** A sentence saying what went wrong with the last attempt, if one did. */
  error?: string;
  email?: string;
}

export function signInPage(view: SignInView): string {
  return page(
    'Sign in',
    html`<h1>Sign in to connect <span class="client">${view.clientName}</span></h1>
${view.error ? html`<p class="message error" role="alert">${view.error}</p>` : ''}
<form method="post" action="${view.action.signIn}">
<label for="api_key">Your agent-context API key</label>
<input id="api_key" name="api_key" type="password" autocomplete="current-password" required
 spellcheck="false" autocapitalize="off" aria-describedby="api_key_hint">
<p class="hint" id="api_key_hint">It starts with <code>ac_</code>. It is checked here and never shown to ${view.clientName}.</p>
<div class="actions"><button type="submit" class="primary">Sign in</button></div>
</form>
<hr>
<h2>No account yet?</h2>
<form method="post" action="${view.action.register}">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${view.email ?? ''}"
 aria-describedby="email_hint">
<p class="hint" id="email_hint">An account comes with an API key, shown once, and starting credit.</p>
<div class="actions"><button type="submit">Create an account</button></div>
</form>`,
  );
}
