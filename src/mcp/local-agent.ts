/**
 * The local agent of a stdio server started without AC_API_KEY: registered once, its key kept in
 * DATA_DIR/local-agent.json (mode 0600) so that a desktop user can attach the server and go. The key is
 * never printed.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Core } from '../core/core.js';

export const LOCAL_AGENT_FILE = 'local-agent.json';

interface LocalAgent {
  agent_key: string;
  email: string;
}

export async function localAgentKey(core: Core, dataDir: string): Promise<string> {
  const file = path.join(dataDir, LOCAL_AGENT_FILE);
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as LocalAgent;
    await core.accounts.authenticate(saved.agent_key);
    return saved.agent_key;
  } catch {
    // absent, unreadable, or its account is gone: make a new one
  }
  const email = `local-${randomBytes(6).toString('hex')}@agent-context.local`;
  const registered = await core.accounts.register({ email, name: 'local agent' });
  const agent: LocalAgent = { agent_key: registered.agent_key, email };
  await writeFile(file, `${JSON.stringify(agent, null, 2)}\n`, { mode: 0o600 });
  return agent.agent_key;
}
