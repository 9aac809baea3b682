/**
 * The local agent: the store owner's own account, used by `agent-context mcp` when AC_API_KEY is unset
 * (directly, or through the bridge to a running server). Registered once on the unlimited plan, so that a
 * person is never refused for credit by their own desktop client; its key is kept in
 * DATA_DIR/local-agent.json (mode 0600, written whole by a rename) and never printed.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Core } from './core/core.js';
import { DurableJsonFile } from './store/json/durable-json-file.js';
import { LOCAL_AGENT_FILE } from './store/json/json-file-store.js';
import { StoreOpenError } from './store/store-open-error.js';

interface LocalAgent {
  agent_key: string;
  email: string;
  /**
   * Set once this program has put the account on the unlimited plan; from then on the plan is the
   * operator's to change (`accounts plan`), and a start never changes it back. Absent in files written
   * before plans existed: such an agent is moved once.
   */
  unlimited_set?: true;
}

/** The saved local agent; undefined when there is none yet; a damaged file is an error, not a new agent. */
async function readLocalAgent(dataDir: string): Promise<LocalAgent | undefined> {
  const file = path.join(dataDir, LOCAL_AGENT_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let saved: Partial<LocalAgent> | undefined;
  try {
    saved = JSON.parse(text) as Partial<LocalAgent>;
  } catch {
    saved = undefined;
  }
  if (typeof saved?.agent_key !== 'string' || typeof saved.email !== 'string') {
    throw new StoreOpenError(
      `${file} is damaged: it should hold the local agent's agent_key and email. Restore it from a backup, or ` +
        "move it aside to start a new local agent (the old one's memories stay in the store under its account).",
    );
  }
  return saved as LocalAgent;
}

/** The local agent's key as saved in DATA_DIR, without opening the store (the bridge's way). */
export async function readLocalAgentKey(dataDir: string): Promise<string | undefined> {
  return (await readLocalAgent(dataDir))?.agent_key;
}

/**
 * The local agent's key: the saved one when its account still exists, otherwise a new account on the
 * unlimited plan. A local agent saved by an older version is moved to the unlimited plan once.
 */
export async function ensureLocalAgent(core: Core, dataDir: string): Promise<string> {
  let agent = await readLocalAgent(dataDir);
  if (agent) {
    const account = await core.accounts.authenticate(agent.agent_key).catch(() => undefined);
    if (!account) agent = undefined; // its account is gone: make a new one
  }
  if (!agent) {
    const email = `local-${randomBytes(6).toString('hex')}@agent-context.local`;
    const registered = await core.accounts.register({ email, name: 'local agent' });
    agent = { agent_key: registered.agent_key, email };
  }
  if (!agent.unlimited_set) {
    await core.accounts.setPlan({ email: agent.email, plan: 'unlimited' });
    agent = { ...agent, unlimited_set: true };
    await new DurableJsonFile<LocalAgent>(path.join(dataDir, LOCAL_AGENT_FILE)).write(agent);
  }
  return agent.agent_key;
}
