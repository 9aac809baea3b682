/**
 * An authorization that cannot go on, shown to the person (a request with no valid redirect to send the
 * error to, an expired sign-in): what happened and what to do, never a stack.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import { html, page, pageCsp } from './html.js';

export function errorPage(title: string, sentence: string): string {
  return page(
    title,
    html`<h1>${title}</h1><p class="error" role="alert">${sentence}</p>
<p>Start again from the application you were connecting.</p>`,
  );
}

/** oidc-provider's `renderError`: its error and description, in our page. */
export async function renderProviderError(
  ctx: KoaContextWithOIDC,
  out: { error: string; error_description?: string },
): Promise<void> {
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', pageCsp());
  ctx.body = errorPage(
    'This authorization cannot go on',
    `${out.error_description ?? 'The request was refused'} (${out.error}).`,
  );
}
