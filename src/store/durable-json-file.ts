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
    const temp = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${process.pid}.tmp`);
    const handle = await open(temp, 'w', 0o600); // owner-only, like every file of the store
    try {
      // Compact: indentation would make the file grow with the square of the nesting depth.
      await handle.writeFile(JSON.stringify(data), 'utf8');
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, this.file);
    // Make the rename durable. Some filesystems refuse to fsync a directory (EINVAL); the file is already
    // in place and whole, so that is not a failure of this write.
    const dir = await open(path.dirname(this.file), 'r');
    try {
      await dir.sync().catch(() => undefined);
    } finally {
      await dir.close();
    }
  }
}
