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
 * The console's icon (src/web/console/icon.svg), inline: without an icon a browser asks for /favicon.ico,
 * which is a 404 here (and an error in its console).
 */
const ICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#13233d"/>' +
    '<path d="M9 22 16 9l7 13" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>' +
    '<circle cx="16" cy="19" r="2.2" fill="#8cb8ff"/></svg>',
)}`;

/**
 * The pages' policy: nothing but this origin's style sheet (and the icon, a data: URL); forms post to this
 * origin, and to where the answer goes next, since a browser applies form-action to the redirects after a
 * post (a consent ends at the client's redirect URI, and so does a sign-in when the consent was given
 * before).
 */
export function pageCsp(formTargets: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
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
<link rel="icon" href="${ICON}" type="image/svg+xml">
<link rel="stylesheet" href="/oauth/assets/oauth.css">
</head>
<body>
<header class="bar"><div class="bar-inner"><span class="brand">agent-context</span></div></header>
<main>
<div class="card">
${body}
</div>
</main>
</body>
</html>
`.text;
}
