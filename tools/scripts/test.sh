#!/usr/bin/env bash
# `npm test`: install what is missing, then lint, type-check, unit and integration tests,
# process tests of the built server, and the browser suite in Chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source tools/scripts/setup.sh

ensure_node_modules
ensure_ferretdb
ensure_chromium

say "Lint and type-check"
npx nx run-many -t lint typecheck --outputStyle=static
say "Unit and integration tests (Jest, real embedded database)"
npx nx run-many -t test --outputStyle=static
say "Build"
npx nx run-many -t build -p api web --outputStyle=static
say "Process tests of the built server (node --test)"
npx nx run api:test-process --outputStyle=static
say "Browser tests (Playwright in Chromium)"
npx nx run web-e2e:e2e --outputStyle=static
say "All checks passed"
