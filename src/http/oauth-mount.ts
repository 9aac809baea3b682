/**
 * Opens the authorization server (src/oauth) for the HTTP server when Config turns OAuth on: its settings
 * from Config, its records from the store, and what it needs of the core (accounts), so that the OAuth room
 * knows neither Config nor the core's table. Says in the log why OAuth is off when it could have been on.
 */
import type { Config } from '../config.js';
import type { Core } from '../core/core.js';
import { AppError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { type AuthorizationServer, createAuthorizationServer } from '../oauth/authorization-server.js';
import { MCP_PATH } from '../server-paths.js';
import type { OAuthRecords } from '../store/oauth-records.js';
import { requireAccount } from './request-identity.js';

export interface OAuthService {
  config: Readonly<Config>;
  core: Core;
  logger: Logger;
  oauthRecords?: OAuthRecords;
}

export async function openOAuthRoom(service: OAuthService): Promise<AuthorizationServer | undefined> {
  const { config, core, logger } = service;
  if (config.oauthOffReason) logger.info(`OAuth for remote MCP clients is off: ${config.oauthOffReason}`);
  const oauth = config.oauth;
  if (!oauth || !service.oauthRecords) return undefined;
  return createAuthorizationServer({
    settings: {
      issuer: oauth.issuer,
      resource: `${oauth.issuer}${MCP_PATH}`,
      accessTokenTtlSeconds: oauth.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: oauth.refreshTokenTtlSeconds,
      cimdAllowLoopback: oauth.cimdAllowLoopback,
    },
    records: service.oauthRecords,
    authenticate: (key) => core.accounts.authenticate(key),
    findAccount: (agentId) => core.accounts.find(agentId),
    async register(email) {
      const parsed = core.schemas.RegisterInput.safeParse({ email });
      if (!parsed.success) {
        throw new AppError(
          'invalid_input',
          'That is not an e-mail address this service accepts: check it, or use another one (disposable addresses are refused).',
          { field: 'email' },
        );
      }
      const made = await core.accounts.register(parsed.data);
      return { key: made.agent_key, account: await core.accounts.authenticate(made.agent_key) };
    },
    accountOf: (req) => requireAccount(req, core),
    onError: (err) =>
      logger.warn({ err: (err as Error)?.message ?? String(err) }, 'OAuth bookkeeping failed'),
    onServerError: (err) => logger.error({ err }, 'the authorization server failed (answered server_error)'),
  });
}
