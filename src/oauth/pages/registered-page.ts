/** After an account is made on the way: its key, shown this once, then on to the consent step. */
import { html, page } from './html.js';

export interface RegisteredView {
  key: string;
  email: string;
  creditCents: number;
  /** Where the authorization goes on (the consent step). */
  continueTo: string;
}

export function registeredPage(view: RegisteredView): string {
  const credit = `$${(view.creditCents / 100).toFixed(2)}`;
  return page(
    'Account created',
    html`<h1>Your account is ready</h1>
<p>An account for <strong>${view.email}</strong> was made with ${credit} of credit. This is its API key:</p>
<code class="key" id="key">${view.key}</code>
<p class="message warning" role="note">It is shown only this once. Keep it somewhere safe: you need it to sign
in again, to use the console, and for clients that take a key.</p>
<div class="actions"><a class="button primary" href="${view.continueTo}">I have saved it, continue</a></div>`,
  );
}
