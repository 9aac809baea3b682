/**
 * Conditional requests on REST (RFC 9110 section 13), for the routes whose table entry takes them: a memory's
 * version is its entity tag. `If-Match: "N"` becomes the input's `expected_version`, `If-None-Match: *` its
 * `create_only`; the answer's `memory.version` goes out as `ETag: "N"`. The core decides (412
 * version_conflict); this file only translates between headers and fields.
 */
import type { Request, Response } from 'express';
import { AppError } from '../core/errors.js';
import type { HttpRoute } from '../core/operation-kit.js';

/** A strong entity tag of a version: `"3"` (a bare 3 is taken too; a weak tag never matches a write). */
const ENTITY_TAG = /^"?([1-9]\d{0,9})"?$/;

function parseIfMatch(value: string): number {
  if (/^W\//.test(value.trim())) {
    // RFC 9110 13.1.1: If-Match compares strongly, so a weak tag matches no current representation.
    throw new AppError(
      'version_conflict',
      `If-Match holds a weak entity tag (${JSON.stringify(value.trim())}), which never matches a write (RFC 9110); ` +
        'send the strong ETag retrieve and store answer, like "3". Nothing was charged or changed.',
      { field: 'If-Match' },
    );
  }
  const match = ENTITY_TAG.exec(value.trim());
  if (!match?.[1] || Number(match[1]) > 2_147_483_647) {
    throw new AppError(
      'invalid_input',
      `If-Match must be one memory's ETag, like "3" (its version, as retrieve and store send it), not ${JSON.stringify(value)}; ` +
        'If-Match: * and lists of tags are not supported.',
      { field: 'If-Match' },
    );
  }
  return Number(match[1]);
}

function sameAsField(fields: Record<string, unknown>, field: string, value: unknown, header: string): void {
  if (fields[field] !== undefined && fields[field] !== value) {
    throw new AppError(
      'invalid_input',
      `The ${header} header and the ${field} field disagree (${JSON.stringify(value)} against ` +
        `${JSON.stringify(fields[field])}); send one of them.`,
      { field },
    );
  }
}

/** The request's fields with the conditional headers the route takes read into them. */
export function withPreconditions(
  req: Request,
  route: HttpRoute,
  fields: Record<string, unknown>,
): Record<string, unknown> {
  let out = fields;
  const ifMatch = route.ifMatch ? req.get('if-match') : undefined;
  if (ifMatch !== undefined) {
    const version = parseIfMatch(ifMatch);
    sameAsField(fields, 'expected_version', version, 'If-Match');
    out = { ...out, expected_version: version };
  }
  const ifNoneMatch = route.ifNoneMatch ? req.get('if-none-match') : undefined;
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() !== '*') {
      throw new AppError(
        'invalid_input',
        `If-None-Match on a store must be * (create only if absent), not ${JSON.stringify(ifNoneMatch)}.`,
        { field: 'If-None-Match' },
      );
    }
    sameAsField(fields, 'create_only', true, 'If-None-Match: *');
    out = { ...out, create_only: true };
  }
  return out;
}

/** Sends the answered memory's version as its ETag, on a route that says so. */
export function setEntityTag(res: Response, route: HttpRoute, body: unknown): void {
  if (!route.etag) return;
  const version = (body as { memory?: { version?: unknown } } | undefined)?.memory?.version;
  if (typeof version === 'number') res.setHeader('ETag', `"${version}"`);
}
