/**
 * The chains' members, derived from the provider list: each chain's default order, and each provider that
 * the configuration lets join (its required key or URL set) as a chain member, its fetch bound to the
 * shared HTTP client and the configuration, its token-bucket rate taken from its descriptor.
 */
import type { HttpClient } from './http-client.js';
import type { LiveConfig } from './live-config.js';
import type { PriceQuery } from './price-query.js';
import type { Provider, RequestScope } from './provider-chain.js';
import {
  CHAIN_KINDS,
  type ChainKind,
  canJoin,
  type PriceKind,
  type ProviderDescriptor,
  type ProviderTools,
  rateOf,
  servesKind,
} from './provider-descriptor.js';
import { PROVIDERS } from './provider-list.js';

/** A price provider also says which kinds of asset it prices. */
export interface PriceProvider extends Provider<PriceQuery> {
  kinds: readonly PriceKind[];
}

/** The ids of the providers serving `kind`, in list order: the chain's default order. */
export function providerIds(kind: ChainKind): string[] {
  return PROVIDERS.filter((provider) => servesKind(provider, kind)).map((provider) => provider.id);
}

/** Each chain's default order, and the ids each AC_*_PROVIDERS variable accepts. */
export const PROVIDER_IDS: Readonly<Record<ChainKind, readonly string[]>> = Object.freeze(
  Object.fromEntries(CHAIN_KINDS.map((kind) => [kind, Object.freeze(providerIds(kind))])) as Record<
    ChainKind,
    readonly string[]
  >,
);

/** Orders providers as `order` lists them; ids not listed are left out. */
export function ordered<P extends { id: string }>(providers: P[], order: readonly string[]): P[] {
  return order.flatMap((id) => providers.filter((p) => p.id === id));
}

function joining(config: LiveConfig) {
  return PROVIDERS.filter((provider) => canJoin(provider, config));
}

/**
 * Its bucket as a chain member: the rate this instance may use, and the descriptor's burst if it sets one
 * (or the configuration's override of both).
 */
function bucketOf(provider: ProviderDescriptor, config: LiveConfig) {
  const override = config.rates?.[provider.id];
  const burst = override ? override.burst : provider.burst;
  return { perMinute: override?.perMinute ?? rateOf(provider, config), ...(burst && { burst }) };
}

/** The tools a provider's call gets: those of the request it serves. */
export type ToolsFor = (scope: RequestScope) => ProviderTools;

/** The weather, news, search or geocoding chain's members, in the configured order. */
export function chainMembers(
  kind: Exclude<ChainKind, 'price'>,
  http: HttpClient,
  config: LiveConfig,
  toolsFor: ToolsFor,
): Provider[] {
  const members = joining(config).flatMap((provider): Provider[] => {
    const fetch = provider.serves[kind];
    if (!fetch) return [];
    return [
      {
        id: provider.id,
        ...bucketOf(provider, config),
        fetch: (q, d, scope) => fetch(http, config, q, d, toolsFor(scope)),
      },
    ];
  });
  return ordered(members, config.providers?.[kind] ?? PROVIDER_IDS[kind]);
}

/** Every price provider, in the configured order; each price goes to those of its asset kind. */
export function priceMembers(http: HttpClient, config: LiveConfig, toolsFor: ToolsFor): PriceProvider[] {
  const members = joining(config).flatMap((provider): PriceProvider[] => {
    const price = provider.serves.price;
    if (!price) return [];
    return [
      {
        id: provider.id,
        kinds: price.kinds,
        ...bucketOf(provider, config),
        fetch: (q, d, scope) => price.fetch(http, config, q, d, toolsFor(scope)),
      },
    ];
  });
  return ordered(members, config.providers?.price ?? PROVIDER_IDS.price);
}
