import { join } from 'node:path';
import {
  COMPILE_CACHE_GLOBAL,
  compileCacheDir,
  installCompileCache,
} from './boot/compile-cache';
import { deferModules } from './boot/deferred-modules';

/**
 * The built server's entry (`dist/apps/api/main.js`): it installs the compile cache first, then
 * loads the server (`server.js`, built from `main.ts`) through it, so that the server bundle's own
 * code is cached too.
 */
declare const __non_webpack_require__: NodeJS.Require;

const server = join(__dirname, 'server.js');
const cache = installCompileCache(compileCacheDir(process.env), server);
if (cache) Object.assign(globalThis, { [COMPILE_CACHE_GLOBAL]: cache });
deferModules(server);
__non_webpack_require__(server);
