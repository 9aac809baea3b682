/**
 * The console's Connected apps, as REST with the account's API key (under the API's own rate limits): the
 * clients this account allowed, with when and how they were last used, and the revocation of one, which
 * deletes every grant this account gave that client, with their codes and tokens, at once on every instance.
 */
import { type Request, Router } from 'express';
import { AppError } from '../core/errors.js';
import type { Account } from '../core/model.js';
import type { Consents } from './consents.js';

export const CONNECTED_APPS_PATH = '/api/ac/oauth/clients';

export function connectedAppsRoutes(
  consents: Consents,
  accountOf: (req: Request) => Promise<Account>,
): Router {
  const router = Router();
  router.get(CONNECTED_APPS_PATH, async (req, res) => {
    res.locals.operation = 'oauth_clients';
    const account = await accountOf(req);
    const list = await consents.list(account.id);
    res.json({
      clients: list.map((consent) => ({
        client_id: consent.clientId,
        client_name: consent.clientName,
        client_host: consent.clientHost,
        scopes: consent.scopes,
        allowed_at: new Date(consent.allowedAt).toISOString(),
        last_used_at: consent.lastUsedAt === null ? null : new Date(consent.lastUsedAt).toISOString(),
      })),
    });
  });
  router.delete(CONNECTED_APPS_PATH, async (req, res) => {
    res.locals.operation = 'oauth_clients_revoke';
    const account = await accountOf(req);
    const clientId = typeof req.query.client_id === 'string' ? req.query.client_id : '';
    const revoked = clientId !== '' && (await consents.revoke(account.id, clientId));
    if (!revoked) {
      throw new AppError(
        'not_found',
        `This account has not allowed a client ${JSON.stringify(clientId.slice(0, 200))}; GET ${CONNECTED_APPS_PATH} lists the ones it has.`,
        { field: 'client_id' },
      );
    }
    res.json({ revoked: true, client_id: clientId });
  });
  return router;
}
