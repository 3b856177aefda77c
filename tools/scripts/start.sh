#!/usr/bin/env bash
# `npm start`: install what is missing, build, and run MetatronOS (API + console on one port).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source tools/scripts/setup.sh

ensure_node_modules
ensure_bubblewrap
if [[ -z "${MONGODB_URI:-}" ]]; then
  ensure_ferretdb
fi
say "Building the API and the console"
build_log=$(mktemp -t metatronos-build.XXXXXX)
npx nx run-many -t build -p api web --outputStyle=static --verbose=false >"$build_log" 2>&1 || {
  cat "$build_log" >&2
  echo "The build failed (log above)." >&2
  exit 1
}
rm -f "$build_log"
say "Starting MetatronOS"
# A young generation of 4 MB (V8's default grows to 16 MB per semi-space during the start and keeps it): idle RSS
# ~157 -> ~135 MiB, measured no slower to start or per chat turn (docs/operations.md, "Running").
# glibc's malloc: a block of 128 KiB or more gets a mapping of its own, unmapped when freed, and the heap's free top is
# given back past 1 MiB. By default glibc raises both limits (to 32 and 64 MiB) as large blocks are freed, then keeps
# what it freed: idle RSS ~131 -> ~126 MiB, ~50 MB less after a year of memory is loaded, for about one more syscall a
# turn (docs/operations.md, "Running"). Other C libraries ignore them; a value already set wins.
# The benches start the built server with what these lines set (tools/bench/start-options.cjs reads them: keep
# their shape, `export NAME="${NAME:-value}"` and `exec node [flags] dist/apps/api/main.js`).
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-131072}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-1048576}"
exec node --max-semi-space-size=4 dist/apps/api/main.js
