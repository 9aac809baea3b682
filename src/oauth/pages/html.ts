/**
 * The frame of the sign-in and consent pages: server-rendered HTML with no script at all, one style sheet
 * from this origin (oauth.css), a strict Content-Security-Policy of its own, and every interpolated value
 * escaped. Built like the console (its colours and type), readable at phone width.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/gu, (c) => `&#${c.charCodeAt(0)};`);
}

/** A template literal whose values are escaped unless they are `Html` already. */
export class Html {
  constructor(readonly text: string) {}
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    const parts = Array.isArray(value) ? value : [value];
    for (const part of parts) {
      if (part === undefined || part === null || part === false) continue;
      out += part instanceof Html ? part.text : escapeHtml(String(part));
    }
    out += strings[i + 1] ?? '';
  });
  return new Html(out);
}

/**
 * The pages' policy: nothing but this origin's style sheet; forms post to this origin, and (on the consent
 * page) to where the answer goes next, since a browser applies form-action to the redirects after a post.
 */
export function pageCsp(formTargets: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    `form-action 'self'${formTargets.map((target) => ` ${target}`).join('')}`,
    "frame-ancestors 'none'",
  ].join('; ');
}

export function page(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · agent-context</title>
<link rel="stylesheet" href="/oauth/assets/oauth.css">
</head>
<body>
<header class="bar"><span class="brand">agent-context</span></header>
<main class="card">
${body}
</main>
</body>
</html>
`.text;
}
