#!/usr/bin/env bash
# `npm test`: install what is missing, then the format check, the OpenAPI document check, lint, type-check, unit and integration tests,
# a smoke run of every benchmark, process tests of the built server, and the browser suite in Chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source tools/scripts/setup.sh

log=$(mktemp -t metatronos-test.XXXXXX)
trap 'rm -f "$log"' EXIT
# Runs a step, keeping its output for the closing count.
step() { "$@" 2>&1 | tee -a "$log"; }

ensure_node_modules
ensure_ferretdb
ensure_chromium
ensure_espeak
ensure_bubblewrap
ensure_mail_servers

say "Format (Prettier)"
step npx prettier --check . --log-level=warn
say "OpenAPI document (docs/openapi.json matches the code)"
step npm run --silent openapi:check
say "Lint and type-check"
step npx nx run-many -t lint typecheck --outputStyle=static
say "Embedded database patches (Go tests of tools/ferretdb/patches)"
step bash tools/ferretdb/build.sh --test-only
say "Unit and integration tests (Jest, real embedded database)"
step npx nx run-many -t test --outputStyle=static
say "Build"
step npx nx run-many -t build -p api web --outputStyle=static
say "Benchmarks, smoke run (small sizes, no goals: every bench still runs)"
step node tools/bench/run-all.mjs --smoke
say "Process tests of the built server (node --test)"
step npx nx run api:test-process --outputStyle=static
say "Browser tests (Playwright in Chromium)"
step npx nx run web-e2e:e2e --outputStyle=static

# One closing line over all runners: Jest's "Tests: N passed", node's "# pass N", Playwright's "N passed (…)".
passed=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | awk '
  /^Tests: +/ { for (i = 2; i < NF; i++) if ($(i + 1) ~ /^passed/) n += $i }
  /^# pass [0-9]+$/ { n += $3 }
  /^ *[0-9]+ passed \(/ { n += $1 }
  END { print n + 0 }')
say "All checks passed"
echo "tests: ${passed} passed, 0 failed"
