/** `npm run bench`'s progress, on stderr as it goes (stdout carries the report). */
export function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}
