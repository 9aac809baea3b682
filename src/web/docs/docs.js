/**
 * Starts Swagger UI on the service's own OpenAPI document and pre-fills its API-key authorisation with the
 * key the console keeps in this tab's sessionStorage, so that "Try it out" requests carry it as X-API-Key.
 * The key is only read here: it is never written to a URL, a cookie or localStorage (Swagger UI's
 * persistAuthorization stays off), and a key typed into Swagger UI's own Authorize dialog is not stored.
 */
(() => {
  const SESSION_KEY = 'agent-context.key';
  const SCHEME = 'apiKey';
  const status = document.getElementById('key-status');

  function storedKey() {
    try {
      return globalThis.sessionStorage.getItem(SESSION_KEY) || '';
    } catch {
      return '';
    }
  }

  function say(text) {
    if (status) status.textContent = text;
  }

  if (typeof globalThis.SwaggerUIBundle !== 'function') {
    say('The API reference could not start. The raw document is at /api/ac/openapi.json.');
    return;
  }

  /**
   * Accessible names Swagger UI's Authorize dialog gets wrong, mended as it renders: its close button holds
   * only an icon (no name at all), and its "Authorize" and "Logout" buttons are named "Apply credentials"
   * and "Remove authorization", which a person using speech input cannot say from what they see (axe:
   * label-content-name-mismatch): their visible text becomes their name. React leaves these attributes
   * alone afterwards: it only writes the ones whose props change.
   */
  function mendNames(root) {
    for (const button of root.querySelectorAll('button.close-modal:not([aria-label])')) {
      button.setAttribute('aria-label', 'Close');
    }
    for (const button of root.querySelectorAll('.auth-btn-wrapper button[aria-label]')) {
      const text = button.textContent.trim();
      if (text && !button.getAttribute('aria-label').includes(text)) button.removeAttribute('aria-label');
    }
  }
  const mount = document.getElementById('swagger-ui');
  if (mount) new MutationObserver(() => mendNames(mount)).observe(mount, { childList: true, subtree: true });

  const key = storedKey();
  const ui = globalThis.SwaggerUIBundle({
    url: '/api/ac/openapi.json',
    dom_id: '#swagger-ui',
    // Off: its links sit inside each operation's toggle button (nested interactive controls, an axe violation).
    deepLinking: false,
    displayRequestDuration: true,
    persistAuthorization: false,
    queryConfigEnabled: false,
    tryItOutEnabled: false,
    validatorUrl: null,
    presets: [globalThis.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    onComplete() {
      if (key) {
        ui.preauthorizeApiKey(SCHEME, key);
        say(
          'Try-it requests use the API key you signed in with at the console (kept in this tab only). ' +
            'Authorize shows or replaces it.',
        );
      } else {
        say(
          'No API key in this tab: sign in at the console, or paste a key under Authorize, to try the ' +
            'operations that need one.',
        );
      }
    },
    onFailure() {
      say('The OpenAPI document could not be loaded. Reload the page to try again.');
    },
  });
})();
