/**
 * The credentials of this browser tab: the agent's API key and the operator's admin token, kept in
 * sessionStorage only (gone when the tab closes; never in a URL, a cookie or localStorage).
 */
const AGENT_KEY = 'agent-context.key';
const ADMIN_TOKEN = 'agent-context.admin-token';

function read(name: string): string | null {
  try {
    return sessionStorage.getItem(name);
  } catch {
    return null;
  }
}

function write(name: string, value: string | null): void {
  try {
    if (value === null) sessionStorage.removeItem(name);
    else sessionStorage.setItem(name, value);
  } catch {
    // Storage disabled: the console then works until the page is reloaded.
  }
}

export const session = {
  key: (): string | null => read(AGENT_KEY),
  setKey: (key: string | null): void => write(AGENT_KEY, key),
  adminToken: (): string | null => read(ADMIN_TOKEN),
  setAdminToken: (token: string | null): void => write(ADMIN_TOKEN, token),
};
