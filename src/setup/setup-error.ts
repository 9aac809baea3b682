/**
 * The one error `agent-context setup` reports to the user: a sentence saying what is wrong and what to do,
 * printed on one line without a stack trace. Anything else that escapes the command is a bug.
 */
export class SetupError extends Error {
  override name = 'SetupError';
}
