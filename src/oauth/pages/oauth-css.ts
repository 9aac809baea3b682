/** The one style sheet of the sign-in and consent pages: the console's colours, type and controls. */
export const OAUTH_CSS = `:root {
  --bg: #f4f6f8; --surface: #ffffff; --text: #1b1f24; --muted: #57606a; --border: #d0d7de;
  --accent: #0a58a8; --accent-dark: #07427e; --danger: #b42318; --danger-weak: #fdecea;
  --warn-weak: #fff4e5; --warn: #7a4100; --ok-weak: #e8f5ec; --focus: #1f6feb; --header: #13233d;
  --radius: 8px; color-scheme: light;
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 16px / 1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", Arial, sans-serif; }
.bar { background: var(--header); color: #fff; padding: 0.75rem 1rem; }
.brand { font-weight: 700; letter-spacing: 0.01em; }
.card { max-width: 34rem; margin: 1.5rem auto; padding: 1.25rem 1.25rem 1.5rem; background: var(--surface);
  border: 1px solid var(--border); border-radius: var(--radius); }
@media (max-width: 36rem) { .card { margin: 0; border-radius: 0; border-left: 0; border-right: 0; } }
h1 { font-size: 1.35rem; line-height: 1.3; margin: 0 0 0.75rem; }
h2 { font-size: 1.05rem; margin: 1.25rem 0 0.5rem; }
p { margin: 0 0 0.75rem; }
.muted { color: var(--muted); }
form { margin: 0 0 0.5rem; }
label { display: block; font-weight: 600; margin: 0.75rem 0 0.25rem; }
input[type=text], input[type=email], input[type=password] { width: 100%; font: inherit; padding: 0.55rem 0.65rem;
  border: 1px solid var(--muted); border-radius: 6px; background: #fff; color: var(--text); }
.hint { font-size: 0.875rem; color: var(--muted); margin-top: 0.25rem; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; margin-top: 1rem; }
button { font: inherit; font-weight: 600; padding: 0.55rem 1.1rem; border-radius: 6px; cursor: pointer;
  border: 1px solid var(--accent); background: var(--accent); color: #fff; min-height: 2.75rem; }
button:hover { background: var(--accent-dark); }
button.secondary { background: #fff; color: var(--accent); }
button.secondary:hover { background: #eef2f7; }
a.button { display: inline-block; font-weight: 600; padding: 0.55rem 1.1rem; border-radius: 6px; background: var(--accent);
  color: #fff; text-decoration: none; min-height: 2.75rem; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.error { background: var(--danger-weak); color: var(--danger); border-left: 4px solid var(--danger); padding: 0.6rem 0.75rem;
  border-radius: 4px; margin: 0 0 1rem; }
.warning { background: var(--warn-weak); color: var(--warn); border-left: 4px solid var(--warn); padding: 0.6rem 0.75rem;
  border-radius: 4px; margin: 0.75rem 0; }
.key { display: block; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9rem;
  word-break: break-all; background: var(--ok-weak); padding: 0.6rem 0.75rem; border-radius: 6px; margin: 0.5rem 0 1rem; }
ul.scopes { padding-left: 1.25rem; margin: 0.25rem 0 0.75rem; }
ul.scopes li { margin: 0.25rem 0; }
.client { font-weight: 700; overflow-wrap: anywhere; }
.host { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
hr { border: 0; border-top: 1px solid var(--border); margin: 1.25rem 0; }
`;
