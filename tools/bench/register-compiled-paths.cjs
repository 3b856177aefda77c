// The smoke run's counterpart of register-paths.cjs: `@metatronos/*` resolved in the benches compiled to
// dist/bench (tools/bench/tsconfig.smoke.json), where the workspace paths point at .js files.
const { join } = require('node:path');
const { register } = require('tsconfig-paths');
const root = join(__dirname, '../..');
const ts = require('typescript');
const { config } = ts.readConfigFile(
  join(root, 'tsconfig.base.json'),
  ts.sys.readFile,
);
const paths = Object.fromEntries(
  Object.entries(config.compilerOptions.paths).map(([name, targets]) => [
    name,
    targets.map((target) => target.replace(/\.ts$/, '.js')),
  ]),
);
register({ baseUrl: join(root, 'dist/bench'), paths });
