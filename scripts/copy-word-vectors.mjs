/**
 * Copies the in-process embedding model's word vectors (src/embeddings/word-vectors-en.bin, and the note of
 * where they come from) to dist/embeddings/, beside the module that reads them. Run by `npm run build`.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
mkdirSync(path.join(root, 'dist', 'embeddings'), { recursive: true });
for (const file of ['word-vectors-en.bin', 'word-vectors-en.md']) {
  copyFileSync(path.join(root, 'src', 'embeddings', file), path.join(root, 'dist', 'embeddings', file));
}
