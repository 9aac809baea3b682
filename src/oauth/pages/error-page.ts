/**
 * An authorization that cannot go on, shown to the person (a request with no valid redirect to send the
 * error to, an expired sign-in): what happened and what to do, never a stack.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import { html, page, pageCsp } from './html.js';

/** What a person can make of oidc-provider's errors that end on a page rather than at the client. */
const SENTENCES: Record<string, string> = {
  invalid_redirect_uri:
    'The application asked for the answer to go to an address it did not register, so it is not sent.',
  invalid_client: 'This service does not know the application that sent you here (or no longer knows it).',
  invalid_request: 'The application sent you here with a request this service cannot carry out.',
  invalid_client_metadata:
    'The description the application publishes of itself is not one this service accepts.',
  unauthorized_client: 'The application is not allowed to ask for access this way.',
};

/** A page saying what went wrong; `details` is what the server said, in the protocol's words. */
export function errorPage(title: string, sentence: string, details?: string): string {
  return page(
    title,
    html`<h1>${title}</h1>
<p class="message error" role="alert">${sentence}</p>
<p>Start again from the application you were connecting.</p>
${details ? html`<p class="details">Details: <span class="mono">${details}</span></p>` : ''}`,
  );
}

/** oidc-provider's `renderError`: its error and description, in our page. */
export async function renderProviderError(
  ctx: KoaContextWithOIDC,
  out: { error: string; error_description?: string },
): Promise<void> {
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', pageCsp());
  ctx.set('Cache-Control', 'no-store');
  ctx.body = errorPage(
    'This authorization cannot go on',
    SENTENCES[out.error] ?? 'The request was refused.',
    `${out.error_description ?? out.error} (${out.error})`,
  );
}
