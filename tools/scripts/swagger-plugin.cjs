// The @nestjs/swagger compiler plugin as the production build runs it (apps/api/webpack.config.js), for the
// other two places that compile the API: `npm run openapi` (ts-node) and the API's Jest tests (ts-jest
// astTransformers). The plugin adds schema facts from types, class-validator limits and doc comments, so all
// three must run it alike for docs/openapi.json to equal what the built app serves.
const swaggerPlugin = require('@nestjs/swagger/plugin');

/** Keep equal to the plugin options in apps/api/webpack.config.js. */
const SWAGGER_PLUGIN_OPTIONS = { introspectComments: true };

/** A `before` transformer for a TypeScript program (the plugin reads types, so it needs the program). */
function swaggerTransformer(program) {
  return swaggerPlugin.before({ ...SWAGGER_PLUGIN_OPTIONS }, program);
}

module.exports = {
  SWAGGER_PLUGIN_OPTIONS,
  swaggerTransformer,
  // ts-jest astTransformer interface. Its language service makes a new program as files change: take the
  // current one for each file, not the one that existed when the transformer was made.
  name: 'metatronos-nestjs-swagger-plugin',
  version: 1,
  factory: (compiler) => (context) => (sourceFile) =>
    swaggerTransformer(
      compiler._languageService?.getProgram() ?? compiler.program,
    )(context)(sourceFile),
};
