// `npm run openapi` writes docs/openapi.json from the code; `npm run openapi:check` fails when the
// committed file differs from what the code generates (npm test runs the check).
//
// The document is built by the app's own buildOpenApiDocument (apps/api/src/http/configure-app.ts) on an app
// created in Nest's preview mode, so no database is needed. The sources are compiled with the
// @nestjs/swagger compiler plugin as the production build runs it (tools/scripts/swagger-plugin.cjs).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const target = join(root, 'docs/openapi.json');
const require = createRequire(import.meta.url);

/** Objects whose keys are names (routes, schemas): sorted, so moving code around does not reorder the file. */
const SORTED_MAPS = [['paths'], ['components', 'schemas']];

async function generate() {
  const { swaggerTransformer } = require('./swagger-plugin.cjs');
  require('ts-node').register({
    project: join(root, 'apps/api/tsconfig.app.json'),
    // The project's own declaration files too (minisearch-searchable-map.d.ts), as tsc reads them.
    files: true,
    // The plugin reads types, so it needs the whole program (as the webpack build does): no transpile-only.
    transformers: (program) => ({
      before: [swaggerTransformer(program)],
    }),
  });
  require(join(root, 'tools/bench/register-paths.cjs'));
  const { generateOpenApiDocument } = require(
    join(root, 'tools/scripts/openapi-document.ts'),
  );
  const document = await generateOpenApiDocument();
  for (const path of SORTED_MAPS) {
    const parent = path
      .slice(0, -1)
      .reduce((node, key) => node?.[key], document);
    const key = path.at(-1);
    if (!parent?.[key]) continue;
    parent[key] = Object.fromEntries(
      Object.entries(parent[key]).sort(([a], [b]) => (a < b ? -1 : a > b)),
    );
  }
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(target)) ?? {};
  return prettier.format(JSON.stringify(document), {
    ...options,
    filepath: target,
  });
}

/** Up to `max` JSON pointers where the two documents differ, for the hint. */
function differences(committed, generated, path = '', out = [], max = 8) {
  if (out.length >= max) return out;
  const isObject = (v) => v !== null && typeof v === 'object';
  if (!isObject(committed) || !isObject(generated)) {
    if (JSON.stringify(committed) !== JSON.stringify(generated))
      out.push(
        committed === undefined
          ? `+ ${path || '/'} (only in the code)`
          : generated === undefined
            ? `- ${path || '/'} (only in the committed file)`
            : `~ ${path || '/'}: ${JSON.stringify(committed)?.slice(0, 60)} → ${JSON.stringify(generated)?.slice(0, 60)}`,
      );
    return out;
  }
  const keys = new Set([...Object.keys(committed), ...Object.keys(generated)]);
  for (const key of keys) {
    const pointer = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    differences(committed[key], generated[key], pointer, out, max);
    if (out.length >= max) break;
  }
  return out;
}

const check = process.argv.includes('--check');
const started = Date.now();
const text = await generate();
const where = relative(process.cwd(), target) || target;

if (!check) {
  writeFileSync(target, text);
  console.log(
    `Wrote ${where} (${text.length} bytes) in ${Date.now() - started} ms.`,
  );
  process.exit(0);
}

let committed;
try {
  committed = readFileSync(target, 'utf8');
} catch {
  committed = undefined;
}
if (committed === text) {
  console.log(`${where} matches the code.`);
  process.exit(0);
}
console.error(
  `${where} is out of date: it differs from the document the code generates.\n` +
    'Run `npm run openapi` and commit docs/openapi.json.',
);
if (committed === undefined) {
  console.error(`(${where} does not exist.)`);
} else {
  let parsed;
  try {
    parsed = JSON.parse(committed);
  } catch (error) {
    console.error(`(${where} is not valid JSON: ${error.message})`);
  }
  if (parsed !== undefined) {
    const diff = differences(parsed, JSON.parse(text));
    console.error(
      diff.length
        ? `First differences (JSON pointers):\n  ${diff.join('\n  ')}`
        : 'Same content, different formatting or key order.',
    );
  }
}
process.exit(1);
