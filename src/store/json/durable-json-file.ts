/**
 * A lowdb adapter like lowdb's own JSONFile, but durable: the new file is written beside the old one,
 * flushed to disk (fdatasync), renamed over it, and the directory is fsynced, so a write that resolved
 * survives a crash or power loss and a crash mid-write leaves the previous file whole.
 */
import { open, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Adapter } from 'lowdb';

export class DurableJsonFile<T> implements Adapter<T> {
  constructor(private readonly file: string) {}

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return JSON.parse(text) as T;
  }

  async write(data: T): Promise<void> {
    // Compact: indentation would make the file grow with the square of the nesting depth.
    await this.writeText([JSON.stringify(data)]);
  }

  /**
   * Writes the file from its text in parts, with the same durability as `write`. Each part is awaited,
   * so a large file written in small parts leaves the event loop free between them.
   */
  async writeText(parts: Iterable<string>): Promise<void> {
    const temp = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${process.pid}.tmp`);
    const handle = await open(temp, 'w', 0o600); // owner-only, like every file of the store
    try {
      for (const part of parts) await handle.write(part, null, 'utf8');
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, this.file);
    await syncDirectory(path.dirname(this.file));
  }
}

/**
 * Makes a rename or unlink in `dir` durable. Some filesystems refuse to fsync a directory (EINVAL); the
 * change itself is done, so that is not a failure.
 */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}
