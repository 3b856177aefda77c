// The API bundle's source as Latin-1 text (used by apps/api/webpack.config.js).
//
// V8 keeps each script's source in memory (functions compile lazily from it). One character above
// U+00FF anywhere makes it hold the whole text as two bytes per character: server.js is ~2.5 million
// characters, so 599 box-drawing signs, ellipses and bullets cost ~2.5 MB of idle heap. This rewrites
// those characters without changing what the program does: in string literals, template literals and
// regular expressions as `\uXXXX` escapes (the same value), in comments as `?`. Anything else (an
// identifier, a tagged template, whose raw text its tag can see) stops the build with its position.
'use strict';
const acorn = require('acorn');

const WIDE = /[\u0100-\uffff]/;
const EVERY_WIDE = /[\u0100-\uffff]/g;
const escapeWide = (text) =>
  text.replace(
    EVERY_WIDE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** Where each token and comment of `code` lies, from a full parse (a `/` is a regex or a division by context). */
function pieces(code) {
  const found = [];
  const tagged = [];
  const ast = acorn.parse(code, {
    ecmaVersion: 'latest',
    sourceType: 'script',
    allowHashBang: true,
    allowReturnOutsideFunction: true,
    onToken: (token) =>
      found.push({
        start: token.start,
        end: token.end,
        kind: token.type.label,
        value: token.value,
      }),
    onComment: (_block, _text, start, end) =>
      found.push({ start, end, kind: 'comment' }),
  });
  const walk = (node) => {
    if (!node || typeof node.type !== 'string') return;
    if (node.type === 'TaggedTemplateExpression')
      tagged.push([node.quasi.start, node.quasi.end]);
    for (const value of Object.values(node))
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') walk(value);
  };
  walk(ast);
  return { found: found.sort((a, b) => a.start - b.start), tagged };
}

/**
 * The replacements that make `code` Latin-1: `{ start, end, text }` (end exclusive), in order.
 * Throws when a character outside Latin-1 sits where it cannot be rewritten safely.
 */
function latin1Replacements(code) {
  if (!WIDE.test(code)) return [];
  const { found, tagged } = pieces(code);
  const where = (at) => {
    const line = code.slice(0, at).split('\n').length;
    return `line ${line}: ${JSON.stringify(code.slice(Math.max(0, at - 30), at + 10))}`;
  };
  const replacements = [];
  for (const piece of found) {
    const text = code.slice(piece.start, piece.end);
    if (!WIDE.test(text)) continue;
    const at = piece.start + text.search(WIDE);
    if (piece.kind === 'comment')
      replacements.push({
        ...piece,
        text: text.replace(EVERY_WIDE, '?'),
      });
    else if (piece.kind === 'string' || piece.kind === 'regexp')
      replacements.push({ ...piece, text: escapeWide(text) });
    else if (piece.kind === 'template') {
      if (
        tagged.some(([start, end]) => piece.start >= start && piece.end <= end)
      )
        throw new Error(
          `a character above U+00FF in a tagged template (its tag sees the raw text), ${where(at)}`,
        );
      replacements.push({ ...piece, text: escapeWide(text) });
    } else
      throw new Error(
        `a character above U+00FF in a ${piece.kind} token, ${where(at)}`,
      );
  }
  return replacements;
}

/** What a string, template or regex token's text means (its value; a regex's compiled pattern and flags). */
function meaning(kind, text) {
  // The token's own text, evaluated alone: a build-time check of our own bundle, never input.
  if (kind === 'string') return new Function(`return ${text};`)();
  if (kind === 'template') return new Function(`return \`${text}\`;`)();
  const regex = new Function(`return ${text};`)();
  return `${regex.flags}:${
    new RegExp(
      regex.source.replace(/\\u([0-9a-f]{4})/g, (_m, hex) =>
        String.fromCharCode(parseInt(hex, 16)),
      ),
      regex.flags,
    ).source
  }`;
}

/** Throws unless every rewritten string, template and regex of `replacements` means what it meant in `code`. */
function checkMeaning(code, replacements) {
  for (const { start, end, kind, text } of replacements)
    if (
      kind !== 'comment' &&
      meaning(kind, text) !== meaning(kind, code.slice(start, end))
    )
      throw new Error(
        `rewriting ${JSON.stringify(code.slice(start, end))} as Latin-1 changed its meaning`,
      );
}

/** `code` with `latin1Replacements` applied, checked by `checkMeaning`. */
function toLatin1Source(code) {
  const replacements = latin1Replacements(code);
  checkMeaning(code, replacements);
  let out = '';
  let from = 0;
  for (const { start, end, text } of replacements) {
    out += code.slice(from, start) + text;
    from = end;
  }
  return out + code.slice(from);
}

/** Webpack plugin: rewrites the emitted .js assets as Latin-1 before their source maps are made (mappings kept). */
class Latin1SourcePlugin {
  apply(compiler) {
    const { Compilation, sources } = compiler.webpack;
    compiler.hooks.thisCompilation.tap('Latin1SourcePlugin', (compilation) => {
      compilation.hooks.processAssets.tap(
        {
          name: 'Latin1SourcePlugin',
          stage: Compilation.PROCESS_ASSETS_STAGE_OPTIMIZE_SIZE,
        },
        (assets) => {
          for (const [name, asset] of Object.entries(assets)) {
            if (!name.endsWith('.js')) continue;
            const code = asset.source().toString();
            const replacements = latin1Replacements(code);
            if (!replacements.length) continue;
            checkMeaning(code, replacements);
            const source = new sources.ReplaceSource(asset);
            for (const { start, end, text } of replacements)
              source.replace(start, end - 1, text);
            compilation.updateAsset(name, source);
          }
        },
      );
    });
  }
}

module.exports = { latin1Replacements, toLatin1Source, Latin1SourcePlugin };
