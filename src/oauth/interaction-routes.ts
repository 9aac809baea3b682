/**
 * The person's part of an authorization (oidc-provider hands it to us at /oauth/interaction/<uid>): sign in
 * with the account's API key, or make an account with an e-mail address (as POST /api/ac/register does: a
 * key shown once and the starting credit), then see which client asks and allow or deny. Each step is a
 * plain form post, tied to the browser that began it by oidc-provider's interaction cookie (SameSite=Lax:
 * another site cannot post here with it). Every known failure is a page that says what to do.
 */
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import type Provider from 'oidc-provider';
import { errors as oidcErrors } from 'oidc-provider';
import { AppError } from '../core/errors.js';
import type { Account } from '../core/model.js';
import type { Consents } from './consents.js';
import { INTERACTION_PATH, LOOPBACK_HOSTS } from './oauth-paths.js';
import { type OAuthSettings, READ_SCOPE, RESOURCE_SCOPES, WRITE_SCOPE } from './oauth-settings.js';
import { consentPage } from './pages/consent-page.js';
import { errorPage } from './pages/error-page.js';
import { pageCsp } from './pages/html.js';
import { registeredPage } from './pages/registered-page.js';
import { signInPage } from './pages/sign-in-page.js';

export interface Registered {
  key: string;
  account: Account;
}

export interface InteractionDeps {
  provider: Provider;
  settings: OAuthSettings;
  consents: Consents;
  /** The account of an API key; throws AppError `unauthorized` for an unknown one. */
  authenticate(key: string): Promise<Account>;
  findAccount(agentId: string): Promise<Account | undefined>;
  /** Makes an account as POST /api/ac/register does; throws AppError (invalid_input, conflict, …). */
  register(email: string): Promise<Registered>;
  /** Rate limits for the sign-in and the registration posts (per address). */
  limits: { signIn: RequestHandler[]; register: RequestHandler[] };
}

const SCOPE_TEXT: Record<string, { name: string; description: string }> = {
  [READ_SCOPE]: {
    name: 'Read',
    description:
      'retrieve, search and list your memories and their history, see your account and balance, and fetch live data (each charged as usual)',
  },
  [WRITE_SCOPE]: {
    name: 'Write',
    description: 'store, change, restore, import and delete memories (each charged as usual)',
  },
};

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

function send(res: Response, status: number, body: string, formTargets: readonly string[] = []): void {
  res.status(status);
  res.setHeader('Content-Security-Policy', pageCsp(formTargets));
  res.setHeader('Cache-Control', 'no-store');
  res.type('html').send(body);
}

function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** The redirect URI's origin (for form-action) and what to show of it. */
function redirectOf(interaction: Interaction): { origin: string; host: string; local: boolean } {
  const raw = String(interaction.params.redirect_uri ?? '');
  try {
    const url = new URL(raw);
    const web = url.protocol === 'https:' || url.protocol === 'http:';
    return {
      origin: web ? url.origin : `${url.protocol}`,
      host: web ? url.host : raw,
      local: !web || LOOPBACK_HOSTS.has(url.hostname),
    };
  } catch {
    return { origin: "'none'", host: raw, local: false };
  }
}

export function interactionRoutes(deps: InteractionDeps): Router {
  const { provider, consents } = deps;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 });
  const paths = (uid: string) => ({
    signIn: `${INTERACTION_PATH}/${uid}/sign-in`,
    register: `${INTERACTION_PATH}/${uid}/register`,
    consent: `${INTERACTION_PATH}/${uid}/consent`,
  });

  /** The interaction of this browser, which must be the one in the path. */
  async function details(req: Request, res: Response): Promise<Interaction> {
    const interaction = await provider.interactionDetails(req, res);
    if (interaction.uid !== req.params.uid) throw new oidcErrors.SessionNotFound('interaction mismatch');
    return interaction;
  }

  async function clientName(interaction: Interaction): Promise<string> {
    const client = await provider.Client.find(String(interaction.params.client_id));
    return client?.clientName ?? redirectOf(interaction).host;
  }

  async function showSignIn(req: Request, res: Response, status: number, error?: string, email?: string) {
    const interaction = await details(req, res);
    send(
      res,
      status,
      signInPage({
        action: paths(interaction.uid),
        clientName: await clientName(interaction),
        ...(error ? { error } : {}),
        ...(email ? { email } : {}),
      }),
      // A consent given before: the sign-in's post ends, through redirects, at the client's redirect URI,
      // which form-action must allow as it does on the consent page.
      [redirectOf(interaction).origin],
    );
  }

  async function showConsent(res: Response, interaction: Interaction) {
    const account = await deps.findAccount(String(interaction.session?.accountId));
    if (!account) throw new oidcErrors.SessionNotFound('account gone');
    const redirect = redirectOf(interaction);
    const requested = String(interaction.params.scope ?? '').split(' ');
    const scopes = RESOURCE_SCOPES.filter((scope) => requested.includes(scope));
    const clientId = String(interaction.params.client_id);
    send(
      res,
      200,
      consentPage({
        action: paths(interaction.uid).consent,
        clientName: await clientName(interaction),
        redirectHost: redirect.host,
        ...(clientId.startsWith('https://') ? { clientIdUrl: clientId } : {}),
        localRedirect: redirect.local,
        accountEmail: account.email,
        scopes: (scopes.length > 0 ? scopes : [READ_SCOPE]).map(
          (scope) => SCOPE_TEXT[scope] ?? { name: scope, description: scope },
        ),
      }),
      [redirect.origin],
    );
  }

  const handle =
    (work: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    async (req, res) => {
      try {
        await work(req, res);
      } catch (err) {
        if (err instanceof oidcErrors.SessionNotFound || err instanceof oidcErrors.OIDCProviderError) {
          send(
            res,
            400,
            errorPage(
              'This sign-in has expired',
              'It took longer than ten minutes, was finished already, or was opened in another browser.',
            ),
          );
          return;
        }
        throw err;
      }
    };

  router.get(
    `${INTERACTION_PATH}/:uid`,
    handle(async (req, res) => {
      const interaction = await details(req, res);
      if (interaction.prompt.name === 'login') await showSignIn(req, res, 200);
      else await showConsent(res, interaction);
    }),
  );

  router.post(
    `${INTERACTION_PATH}/:uid/sign-in`,
    ...deps.limits.signIn,
    form,
    handle(async (req, res) => {
      await details(req, res);
      let account: Account;
      try {
        account = await deps.authenticate(field(req, 'api_key'));
      } catch (err) {
        if (err instanceof AppError && err.code === 'unauthorized') {
          await showSignIn(
            req,
            res,
            401,
            'That key is not a valid agent-context API key. Paste the whole key, starting with ac_.',
          );
          return;
        }
        throw err;
      }
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account.id } },
        { mergeWithLastSubmission: false },
      );
    }),
  );

  router.post(
    `${INTERACTION_PATH}/:uid/register`,
    form, // before the limits: they count by the address's domain
    ...deps.limits.register,
    handle(async (req, res) => {
      await details(req, res);
      const email = field(req, 'email');
      let made: Registered;
      try {
        made = await deps.register(email);
      } catch (err) {
        if (err instanceof AppError && (err.code === 'invalid_input' || err.code === 'conflict')) {
          // The same sentence whether or not the address has an account.
          await showSignIn(
            req,
            res,
            400,
            err.code === 'conflict'
              ? 'No new account was made for that address. If you have an account, sign in with its key.'
              : err.message,
            email,
          );
          return;
        }
        throw err;
      }
      const continueTo = await provider.interactionResult(
        req,
        res,
        { login: { accountId: made.account.id } },
        { mergeWithLastSubmission: false },
      );
      send(
        res,
        200,
        registeredPage({
          key: made.key,
          email: made.account.email,
          creditCents: made.account.balanceCents,
          continueTo,
        }),
      );
    }),
  );

  router.post(
    `${INTERACTION_PATH}/:uid/consent`,
    form,
    handle(async (req, res) => {
      const interaction = await details(req, res);
      if (interaction.prompt.name !== 'consent') throw new oidcErrors.SessionNotFound('not at consent');
      if (field(req, 'decision') !== 'allow') {
        await provider.interactionFinished(
          req,
          res,
          { error: 'access_denied', error_description: 'The person denied access.' },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      const accountId = String(interaction.session?.accountId);
      const clientId = String(interaction.params.client_id);
      // The grant this authorization found, else the one this account gave this client before (a native
      // client is asked again, but gets one grant, not one per authorization).
      const existingId = interaction.grantId ?? (await consents.get(accountId, clientId))?.grantId;
      const found = existingId === undefined ? undefined : await provider.Grant.find(existingId);
      const existing = found?.accountId === accountId && found.clientId === clientId ? found : undefined;
      const grant = existing ?? new provider.Grant({ accountId, clientId });
      const missing = interaction.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
        grant.addResourceScope(indicator, scopes.join(' '));
      const grantId = await grant.save();
      const previous = await consents.get(accountId, clientId);
      await consents.put({
        accountId,
        clientId,
        grantId,
        clientName: await clientName(interaction),
        clientHost: redirectOf(interaction).host,
        scopes: (grant.getResourceScope(deps.settings.resource) ?? '').split(' ').filter(Boolean),
        allowedAt: previous?.allowedAt ?? Date.now(),
        lastUsedAt: previous?.lastUsedAt ?? null,
      });
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId } },
        { mergeWithLastSubmission: true },
      );
    }),
  );

  // A limit hit on a page (its 429 is an AppError, with Retry-After set) is a page, not the API's JSON.
  const limited: ErrorRequestHandler = (err, req, res, next) => {
    if (
      !(err instanceof AppError) ||
      err.code !== 'rate_limited' ||
      !req.path.startsWith(`${INTERACTION_PATH}/`)
    )
      return next(err);
    send(res, 429, errorPage('Too many attempts', err.message));
  };
  router.use(limited);

  return router;
}
