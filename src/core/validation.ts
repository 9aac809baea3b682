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
    case 'unrecognized_keys':
      return `${field} has unknown field(s) ${issue.keys.join(', ')}`;
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
  }
}

/** Parses `value` with `schema` or throws `invalid_input` naming the first bad field. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  allowed?: readonly string[],
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  let message = describeIssue(issue);
  if (issue.code === 'unrecognized_keys' && allowed) message += `; allowed fields: ${allowed.join(', ')}`;
  throw new AppError('invalid_input', `${message}.`, { field: fieldName(issue.path) });
}

/** The property names of an object schema, for "allowed fields" hints. */
export function fieldsOf(schema: z.ZodType): string[] {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}
