#!/usr/bin/env bash
# `npm run bench [name]`: install what is missing (as `npm test` does), then run every benchmark
# (or those whose file name contains `name`) through tools/bench/run-all.mjs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source tools/scripts/setup.sh

ensure_node_modules
ensure_ferretdb
ensure_mail_servers
# Only the WhatsApp QR bench needs Chromium: without it that bench says why it did not run, the others still do.
if ! (ensure_chromium); then
  say "No Chromium: the WhatsApp QR benchmark will not run"
fi

exec node tools/bench/run-all.mjs "$@"
