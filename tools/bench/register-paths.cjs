// Lets TypeScript benchmarks import `@metatronos/*` the way the apps do: the
// workspace paths of tsconfig.base.json, resolved from the workspace root.
const { join } = require('node:path');
const { register } = require('tsconfig-paths');
const root = join(__dirname, '../..');
const ts = require('typescript');
const { config } = ts.readConfigFile(
  join(root, 'tsconfig.base.json'),
  ts.sys.readFile,
);
register({ baseUrl: root, paths: config.compilerOptions.paths });
