/**
 * Input validation at the edge: a zod failure becomes one `invalid_input` AppError whose sentence names
 * the field, says what was wrong and what is allowed.
 */
import { z } from 'zod';
import { AppError } from './errors.js';

function fieldName(path: readonly PropertyKey[]): string {
  return path.length === 0 ? 'The request' : path.map(String).join('.');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = fieldName(issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (/received undefined/u.test(issue.message)) return `${field} is required (${issue.expected})`;
      if (!issue.message.startsWith('Invalid input')) return issue.message; // a message the schema wrote
      return `${field} must be of type ${issue.expected}`;
    case 'unrecognized_keys': {
      // Named, but bounded: a body of thousands of long keys must not come back as a huge sentence.
      const shown = issue.keys.slice(0, 5).map((k) => (k.length > 40 ? `${k.slice(0, 40)}…` : k));
      const more = issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : '';
      return `${field} has unknown field(s) ${shown.join(', ')}${more}`;
    }
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
  }
}

/**
 * A string of a parsed input, value or object key, that is not well-formed Unicode (it holds a lone
 * surrogate, which has no UTF-8 form), with the path of the field that holds it. Checked without recursion,
 * and without allocating for strings: only nested objects are queued (with their paths), as a request's
 * input is mostly a few flat strings and this runs on every request. An object's keys and string values are
 * checked in order, each key before its value, and its nested objects after them, the last one first; when
 * several fields are bad, the one named is the first in that order.
 */
function illFormed(value: unknown): { path: PropertyKey[]; inKey: boolean } | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : { path: [], inKey: false };
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: [object, PropertyKey[]][] = [[value, []]];
  while (stack.length > 0) {
    const [current, path] = stack.pop() as [object, PropertyKey[]];
    for (const key in current) {
      if (!Object.hasOwn(current, key)) continue;
      if (!key.isWellFormed()) return { path, inKey: true };
      const child = (current as Record<string, unknown>)[key];
      if (typeof child === 'string') {
        if (!child.isWellFormed()) return { path: [...path, key], inKey: false };
      } else if (typeof child === 'object' && child !== null) {
        stack.push([child, [...path, key]]);
      }
    }
  }
  return undefined;
}

/**
 * Parses `value` with `schema` or throws `invalid_input` naming the first bad field. Every string of the
 * result must be well-formed Unicode: one that is not cannot be stored, returned or logged as UTF-8.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  allowed?: readonly string[],
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) {
    const bad = illFormed(result.data);
    if (bad === undefined) return result.data;
    const field = fieldName(bad.path);
    throw new AppError(
      'invalid_input',
      `${field} ${bad.inKey ? 'has a key that holds' : 'holds'} a lone UTF-16 surrogate, which is not valid ` +
        'Unicode text; send well-formed UTF-8 (escape binary data, e.g. as base64).',
      { field },
    );
  }
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  let message = describeIssue(issue);
  if (issue.code === 'unrecognized_keys' && allowed) message += `; allowed fields: ${allowed.join(', ')}`;
  throw new AppError('invalid_input', `${message}.`, { field: fieldName(issue.path) });
}

/** The property names of an object schema, for "allowed fields" hints. */
export function fieldsOf(schema: z.ZodType): string[] {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}
