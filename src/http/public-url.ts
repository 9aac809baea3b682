/** The service's public base URL: PUBLIC_URL when set (behind a proxy), else derived from the request. */
import type { Request } from 'express';

export function publicBaseUrl(req: Request, configured: string | undefined): string {
  if (configured) return configured;
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}
