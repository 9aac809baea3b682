/**
 * The building blocks that the schemas of several domains share: integers within bounds, the character
 * rules of text fields, e-mail, money, time, plans and the billing fields of a charged answer.
 *
 * One definition serves validation and the published schemas: each rule that JSON Schema can express is a
 * zod check that `z.toJSONSchema` publishes (`.min`/`.max` as minLength/maxLength, `.regex` as `pattern`;
 * several patterns on one field become an `allOf` of one `pattern` each), so the OpenAPI document and the MCP
 * tool schemas state what validation enforces. A rule it cannot express is written in the field's
 * description. Every pattern runs in linear time and means the same with and without the `u` flag (ajv
 * compiles with it, other validators may not) on text within U+0000-U+FFFF; beyond, a length in a pattern
 * counts code points with it, as JSON Schema's maxLength does, and UTF-16 code units without it.
 */
import { z } from 'zod';
import { EMAIL_MAX_CHARS } from '../email.js';
import { PLANS } from '../model.js';

/** No C0 or C1 control character (U+0000-U+001F, U+007F-U+009F). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
export const NO_CONTROL_CHARS = /^[^\u0000-\u001f\u007f-\u009f]*$/u;

/** No control character other than whitespace (tab, line breaks), which a query's normalisation collapses. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
export const NO_NON_SPACE_CONTROL_CHARS = /^[^\u0000-\u0008\u000e-\u001f\u007f-\u009f]*$/u;

/** No bidirectional formatting character: they make a text display differently from what it is. */
export const NO_BIDI_CONTROLS = /^[^\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]*$/u;

/** At least one character that is not whitespace: what `trim()` leaves is not empty. */
export const HAS_NON_SPACE = /\S/u;

/**
 * At most `max` characters once leading and trailing whitespace is trimmed (`trim()` removes exactly what
 * `\s` matches), as a pattern a JSON Schema validator can apply to the untrimmed text. Without the `u` flag,
 * so that validation counts UTF-16 code units as `.max()` does.
 */
export function trimmedAtMost(max: number): RegExp {
  const text = max === 1 ? '\\S' : `\\S(?:[\\s\\S]{0,${max - 2}}\\S)?`;
  return new RegExp(`^\\s*(?:${text}\\s*)?$`);
}

/**
 * How validation counts a text's characters, which JSON Schema cannot say: its maxLength counts code points,
 * the API UTF-16 code units.
 */
export const UTF16_UNITS = 'UTF-16 code units: one beyond U+FFFF counts as 2';

/**
 * An integer field within [min, max], each failure naming the field. `fromQuery` accepts the numeric string
 * a query parameter arrives as.
 */
export function boundedInt(field: string, min: number, max: number, fromQuery = false) {
  const base = fromQuery
    ? z.coerce.number(`${field} must be a number`)
    : z.number(`${field} must be a number`);
  return base
    .int(`${field} must be an integer`)
    .min(min, `${field} must be at least ${min}`)
    .max(max, `${field} must be at most ${max}`);
}

export const Timestamp = z.iso.datetime().describe('ISO 8601 date-time, UTC.');
export const Cents = z.int().describe('An amount in cents.');
export const PlanName = z.enum(PLANS, { message: `plan must be one of ${PLANS.join(', ')}` });

/** The two fields of every charged answer. */
export const billed = {
  cost_cents: Cents.describe('Cents charged for this request.'),
  credit_balance_cents: Cents.describe('Balance after this request, in cents.'),
};

/**
 * An e-mail address, trimmed and lower-cased first. Published as maxLength, `format: email` and the pattern
 * of `z.email()`, the syntax actually checked.
 */
export const Email = z
  .string()
  .trim()
  .toLowerCase()
  .max(EMAIL_MAX_CHARS, `email must be at most ${EMAIL_MAX_CHARS} characters`)
  .check(z.email('email must be a valid e-mail address, like agent@example.com'))
  .describe('E-mail address of the account (trimmed and lower-cased).');

/** The cursor of a simple list (the ledger, the operator's accounts): next_cursor of the previous page. */
export const ListCursor = z
  .string('cursor must be a string')
  .max(512, 'cursor is not one this list gave')
  .optional()
  .describe('next_cursor of the previous page, to read the next one.');

export const NextCursor = z
  .string()
  .nullable()
  .describe('Pass as cursor to read the next page; null on the last page.');
