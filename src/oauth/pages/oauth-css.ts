/**
 * The one style sheet of the sign-in and consent pages: the console's (src/web/console/styles.css) colours,
 * type, header, card, fields, buttons and messages, for a single narrow card; readable at phone width.
 */
export const OAUTH_CSS = `:root {
  --bg: #f4f6f8; --surface: #ffffff; --text: #1b1f24; --muted: #57606a; --border: #d0d7de; --field: #8c959f;
  --accent: #0a58a8; --accent-dark: #07427e; --danger: #b42318; --danger-text: #7a1710; --danger-weak: #fdecea;
  --warn: #9a6700; --warn-text: #6b4500; --warn-weak: #fff8e5; --ok: #1a7f37; --ok-weak: #e8f5ec;
  --info-weak: #eef2f7; --focus: #1f6feb; --header: #13233d; --radius: 8px; --width: 34rem;
  color-scheme: light;
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 16px / 1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", Arial, sans-serif; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.9em; }
code { background: var(--info-weak); padding: 0.05em 0.3em; border-radius: 4px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }

.bar { background: var(--header); color: #fff; }
.bar-inner { max-width: calc(var(--width) + 2.5rem); margin: 0 auto; padding: 0.75rem 1.25rem; }
.brand { font-weight: 700; font-size: 1.1rem; }

main { padding: 1.5rem 1.25rem 2.5rem; }
.card { max-width: var(--width); margin: 0 auto; padding: 1.25rem 1.25rem 1.5rem; background: var(--surface);
  border: 1px solid var(--border); border-radius: var(--radius); overflow-wrap: break-word; }
@media (max-width: 640px) {
  .bar-inner { padding: 0.75rem 0.9rem; }
  main { padding: 1rem 0.75rem 2rem; }
  .card { padding: 1rem 0.9rem 1.25rem; }
}

h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; line-height: 1.3; margin: 1.25rem 0 0.5rem; }
p { margin: 0 0 0.75rem; }
.muted { color: var(--muted); }
.hint { color: var(--muted); font-size: 0.9rem; margin: 0.3rem 0 0; }

form { margin: 0; }
label { display: block; font-weight: 600; margin: 0 0 0.3rem; }
input[type=text], input[type=email], input[type=password] { display: block; width: 100%; min-height: 2.6rem;
  font: inherit; color: inherit; padding: 0.5rem 0.6rem; border: 1px solid var(--field); border-radius: 6px; background: #fff; }
.actions { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: center; margin-top: 1rem; }
button, a.button { display: inline-flex; align-items: center; justify-content: center; min-height: 2.5rem;
  font: inherit; padding: 0.45rem 1rem; border-radius: 6px; border: 1px solid var(--field); background: #fff;
  color: var(--text); cursor: pointer; text-decoration: none; }
button:hover, a.button:hover { background: var(--info-weak); }
button.primary, a.button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.primary:hover, a.button.primary:hover { background: var(--accent-dark); }

.message { padding: 0.65rem 0.9rem; border-radius: var(--radius); border-left: 4px solid; margin: 0 0 1rem; }
.error { background: var(--danger-weak); border-color: var(--danger); color: var(--danger-text); }
.warning { background: var(--warn-weak); border-color: var(--warn); color: var(--warn-text); }
.details { color: var(--muted); font-size: 0.9rem; overflow-wrap: anywhere; }

hr { border: 0; border-top: 1px solid var(--border); margin: 1.5rem 0 1.25rem; }

.facts { margin: 0 0 1rem; display: grid; gap: 0.35rem; }
.facts div { display: grid; grid-template-columns: minmax(6.5rem, 9rem) minmax(0, 1fr); gap: 0.75rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 400px) { .facts div { grid-template-columns: minmax(0, 1fr); gap: 0; } }

ul.scopes { padding-left: 1.25rem; margin: 0.25rem 0 1rem; }
ul.scopes li { margin: 0.35rem 0; }
.client { overflow-wrap: anywhere; }
.nowrap { white-space: nowrap; }
.host { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.9em;
  overflow-wrap: anywhere; }

.key { display: block; margin: 0.5rem 0 1rem; padding: 0.75rem 0.9rem; border: 1px solid var(--ok); border-radius: var(--radius);
  background: var(--ok-weak); font-size: 0.95rem; word-break: break-all; user-select: all; }
`;
