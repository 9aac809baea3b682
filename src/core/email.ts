/**
 * E-mail address rules beyond the syntax that zod's `z.email()` checks: the length limits of RFC 5321
 * (whole address 254, local part 64, each domain label 63) and whether the domain belongs to a disposable
 * (throwaway) address provider, from mailchecker's list (a data package, no framework). A subdomain of a
 * listed domain is disposable too. These rules hold for registration on every face, whatever AC_RATE_LIMIT
 * says.
 */
import mailchecker from 'mailchecker';

const DISPOSABLE_DOMAINS: ReadonlySet<string> = mailchecker.blacklist();

/** The lower-cased domain part of an address (after the last `@`). */
export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** Whether the domain, or a domain it is a subdomain of, is a known disposable-address provider. */
export function isDisposableDomain(domain: string): boolean {
  let current = domain.toLowerCase();
  for (;;) {
    if (DISPOSABLE_DOMAINS.has(current)) return true;
    const dot = current.indexOf('.');
    if (dot === -1) return false;
    current = current.slice(dot + 1);
  }
}

/** The longest address (RFC 5321's path limit less its angle brackets). */
export const EMAIL_MAX_CHARS = 254;

/**
 * RFC 5321's part lengths, as a pattern that a JSON Schema validator can apply too: at most 64 characters
 * before the @, at most 63 in each dot-separated part of the domain.
 */
export const EMAIL_PART_LENGTHS = /^[^@]{1,64}@[^@.]{1,63}(?:\.[^@.]{1,63})*$/u;
