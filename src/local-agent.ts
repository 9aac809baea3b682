/**
 * The local agent: the store owner's own account, used by `agent-context mcp` when AC_API_KEY is unset
 * (directly, or through the bridge to a running server). Registered once on the unlimited plan, so that a
 * person is never refused for credit by their own desktop client; its key is kept in
 * DATA_DIR/local-agent.json (mode 0600) and never printed.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Core } from './core/core.js';
import { LOCAL_AGENT_FILE } from './store/json-file-store.js';

interface LocalAgent {
  agent_key: string;
  email: string;
}

async function readLocalAgent(dataDir: string): Promise<LocalAgent | undefined> {
  try {
    const saved = JSON.parse(await readFile(path.join(dataDir, LOCAL_AGENT_FILE), 'utf8')) as LocalAgent;
    return typeof saved.agent_key === 'string' && typeof saved.email === 'string' ? saved : undefined;
  } catch {
    return undefined; // absent or unreadable
  }
}

/** The local agent's key as saved in DATA_DIR, without opening the store (the bridge's way). */
export async function readLocalAgentKey(dataDir: string): Promise<string | undefined> {
  return (await readLocalAgent(dataDir))?.agent_key;
}

/**
 * The local agent's key: the saved one when its account still exists, otherwise a new account. Either way
 * the account is on the unlimited plan afterwards (an older local agent is moved to it).
 */
export async function ensureLocalAgent(core: Core, dataDir: string): Promise<string> {
  let agent = await readLocalAgent(dataDir);
  if (agent) {
    const account = await core.accounts.authenticate(agent.agent_key).catch(() => undefined);
    if (!account)
      agent = undefined; // its account is gone: make a new one
    else agent = { ...agent, email: account.email };
  }
  if (!agent) {
    const email = `local-${randomBytes(6).toString('hex')}@agent-context.local`;
    const registered = await core.accounts.register({ email, name: 'local agent' });
    agent = { agent_key: registered.agent_key, email };
    await writeFile(path.join(dataDir, LOCAL_AGENT_FILE), `${JSON.stringify(agent, null, 2)}\n`, {
      mode: 0o600,
    });
  }
  await core.accounts.setPlan({ email: agent.email, plan: 'unlimited' });
  return agent.agent_key;
}
