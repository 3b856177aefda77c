const { NxAppWebpackPlugin } = require('@nx/webpack/app-plugin');
const { join } = require('path');
const { Latin1SourcePlugin } = require('./build/latin1-source.cjs');

module.exports = {
  output: {
    path: join(__dirname, '../../dist/apps/api'),
    clean: true,
    ...(process.env.NODE_ENV !== 'production' && {
      devtoolModuleFilenameTemplate: '[absolute-resource-path]',
    }),
  },
  plugins: [
    new NxAppWebpackPlugin({
      target: 'node',
      compiler: 'tsc',
      // main.js is a small launcher that installs the compile cache and then loads server.js
      // (the server, from main.ts) through it: see src/boot/compile-cache.ts.
      main: './src/launcher.ts',
      additionalEntryPoints: [
        { entryName: 'server', entryPath: './src/main.ts' },
      ],
      tsConfig: './tsconfig.app.json',
      assets: [],
      optimization: false,
      outputHashing: 'none',
      generatePackageJson: false,
      sourceMap: true,
      // Swagger metadata from DTO types and JSDoc, at compile time.
      transformers: [
        {
          name: '@nestjs/swagger/plugin',
          options: { introspectComments: true },
        },
      ],
    }),
    // server.js as Latin-1 text: V8 then keeps its source at one byte a character (~2.5 MB less idle heap).
    new Latin1SourcePlugin(),
  ],
};
