/**
 * server.json, the entry for the official MCP Registry, is valid against the registry's JSON schema
 * (vendored in test/fixtures, see its README) and passes the checks the registry makes when it is published:
 * the npm package's mcpName names it, versions are exact and equal package.json's, the npm package is this
 * one on registry.npmjs.org, the repository is a GitHub URL, a remote is HTTPS on a public host with every
 * {variable} of its URL template defined; and it describes only environment variables src/config.ts reads.
 */
import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_VARIABLES } from '../../src/config.js';

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8'));

/** The environment variables the configuration reads: the keys of EnvSchema (src/config-env.ts) and the provider variables the descriptors declare. */
async function configVariables(): Promise<Set<string>> {
  const source = await readFile('src/config-env.ts', 'utf8');
  const block = /const EnvSchema = z\.object\(\{\n([\s\S]*?)\n\}\);/.exec(source)?.[1];
  if (!block) throw new Error('src/config-env.ts no longer has `const EnvSchema = z.object({ ... });`');
  const keys = [...block.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1] as string);
  return new Set([...keys, ...PROVIDER_VARIABLES]);
}

/** The schema compiled with Ajv's default class, which is draft-07 as the schema is; formats checked. */
function compile(schema: object) {
  // `example` is an OpenAPI annotation the generated schema keeps: known, so strict mode accepts it.
  const ajv = new Ajv({ allErrors: true, keywords: ['example'] });
  addFormats.default(ajv);
  return ajv.compile(schema);
}

/** A version range or tag the registry rejects: ^1, ~1, >=1, 1.x, 1.*, latest, a || b, a - b. */
function isVersionRange(version: string): boolean {
  return /[\^~<>=*|\s]|(^|\.)x(\.|$)/i.test(version) || version === 'latest';
}

describe('server.json for the MCP Registry', () => {
  let server: any;
  let pkg: any;
  let schema: any;
  beforeAll(async () => {
    [server, pkg, schema] = await Promise.all([
      readJson('server.json'),
      readJson('package.json'),
      readJson('test/fixtures/server.schema.json'),
    ]);
  });

  it('is valid against the registry schema it names (2025-12-11, JSON Schema draft-07)', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(server.$schema).toBe(schema.$id); // the current schema: the registry refuses deprecated ones
    const validate = compile(schema);
    expect(validate(server), validate.errors?.map((e) => `${e.instancePath} ${e.message}`).join('\n')).toBe(
      true,
    );
  });

  it('the schema rejects what the registry rejects (the validation is not vacuous)', () => {
    const validate = compile(schema);
    const broken = [
      { ...server, name: 'agent-context' }, // no namespace
      { ...server, description: 'x'.repeat(101) },
      { ...server, version: undefined },
      { ...server, packages: [{ ...server.packages[0], version: 'latest' }] },
      { ...server, remotes: [{ ...server.remotes[0], url: 'ws://{host}/mcp' }] },
    ];
    for (const doc of broken) expect(validate(doc), JSON.stringify(doc).slice(0, 80)).toBe(false);
  });

  it('is named by the npm package (mcpName), with the versions and identifier of package.json', () => {
    expect(pkg.mcpName).toBe(server.name);
    // Reverse-DNS: a GitHub namespace is io.github.<owner>, the owner of the repository.
    const [namespace, serverName] = server.name.split('/');
    expect(server.name.split('/')).toHaveLength(2);
    expect(namespace).toMatch(/^io\.github\.[A-Za-z0-9-]+$/);
    expect(serverName).toBe(pkg.name);
    expect(server.repository).toEqual({
      url: `https://github.com/${namespace.slice('io.github.'.length)}/${pkg.name}`,
      source: 'github',
    });
    expect(server.repository.url).toMatch(/^https?:\/\/(www\.)?github\.com\/[\w.-]+\/[\w.-]+\/?$/);
    expect(server.description.length).toBeLessThanOrEqual(100);

    expect(server.version).toBe(pkg.version);
    expect(isVersionRange(server.version)).toBe(false);
    expect(server.packages).toHaveLength(1);
    const [npm] = server.packages;
    expect(npm).toMatchObject({
      registryType: 'npm',
      identifier: pkg.name,
      version: pkg.version,
      transport: { type: 'stdio' },
    });
    expect(npm.registryBaseUrl ?? 'https://registry.npmjs.org').toBe('https://registry.npmjs.org');
    expect(npm.fileSha256).toBeUndefined(); // MCPB only: the registry refuses it on npm
    expect(npm.identifier).not.toContain(' ');
    // The client runs `npx -y agent-context mcp`: the bin, then the subcommand that serves stdio.
    expect(Object.keys(pkg.bin)).toEqual([pkg.name]);
    expect(npm.packageArguments).toEqual([expect.objectContaining({ type: 'positional', value: 'mcp' })]);
  });

  it('describes only environment variables the server reads, none of them required, keys secret', async () => {
    const known = await configVariables();
    expect(known.has('DATA_DIR') && known.has('AC_API_KEY') && known.has('AC_LOG_LEVEL')).toBe(true);
    const variables: any[] = server.packages[0].environmentVariables;
    const names = variables.map((v) => v.name);
    expect(names).toEqual(expect.arrayContaining(['DATA_DIR', 'AC_API_KEY', 'AC_LOG_LEVEL']));
    expect(new Set(names).size).toBe(names.length);
    for (const variable of variables) {
      expect(known, `${variable.name} is not read by src/config.ts`).toContain(variable.name);
      expect(variable.description, variable.name).toEqual(expect.any(String));
      expect(variable.isRequired, variable.name).toBe(false);
      expect(variable.isSecret === true, variable.name).toBe(/_KEY$/.test(variable.name));
    }
  });

  it('offers a remote: Streamable HTTP at /mcp on an HTTPS host the user gives, with the key in X-API-Key', () => {
    expect(server.remotes).toHaveLength(1);
    const [remote] = server.remotes;
    expect(remote.type).toBe('streamable-http');
    // The registry checks a template with each {variable} defined, then the URL with placeholders filled in.
    const used = [...remote.url.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    expect(used.length).toBeGreaterThan(0);
    for (const name of used) expect(Object.keys(remote.variables ?? {})).toContain(name);
    const filled = new URL(remote.url.replace(/\{[^}]+\}/g, 'example.com'));
    expect(filled.protocol).toBe('https:');
    expect(filled.pathname).toBe('/mcp');
    expect(filled.hostname).not.toMatch(/^(localhost|127\.|10\.|192\.168\.)|\.localhost$/);
    expect(remote.headers).toEqual([
      expect.objectContaining({ name: 'X-API-Key', isRequired: true, isSecret: true }),
    ]);
  });
});
