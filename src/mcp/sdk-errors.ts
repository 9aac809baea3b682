/**
 * What the SDK reports through its `onerror` callbacks (the HTTP handler's, the stdio entry's): a request it
 * refused by the protocol's rules (a bad envelope, an unsupported version, a message it could not parse) is
 * the client's doing and logged at debug; anything else is a failure of ours, logged as a warning with its
 * message, so that it shows at the default level. The request's answer is the SDK's either way.
 */
import { ProtocolError, SdkError } from '@modelcontextprotocol/server';
import type { Logger } from '../logger.js';

export function logSdkError(logger: Logger, err: Error, where: string): void {
  if (err instanceof ProtocolError || err instanceof SdkError || err instanceof SyntaxError) {
    logger.debug({ err: err.message }, `${where}: a request was refused`);
  } else {
    logger.warn({ err }, `${where}: the SDK reported a failure`);
  }
}
