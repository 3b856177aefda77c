#!/usr/bin/env bash
# Builds bin/ferretdb-launcher (embedded FerretDB 1.x, SQLite backend).
# Safe to run from any directory; a no-op when the binary is up to date.
set -euo pipefail

if ! command -v go >/dev/null 2>&1; then
  echo "The embedded database needs the Go toolchain (https://go.dev/dl) — or set MONGODB_URI to use an existing MongoDB." >&2
  exit 3
fi

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"

bin=bin/ferretdb-launcher

if [[ -x "$bin" ]]; then
  stale=0
  for src in go.mod go.sum *.go; do
    if [[ "$src" -nt "$bin" ]]; then
      stale=1
      break
    fi
  done
  if [[ "$stale" == 0 ]]; then
    echo "ferretdb-launcher is up to date"
    exit 0
  fi
fi

# modernc.org/sqlite is pure Go, so no C toolchain is needed.
# ferretdb_no_postgresql leaves out the unused PostgreSQL backend.
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -tags ferretdb_no_postgresql -ldflags='-s -w' -o "$bin" .
echo "built $PWD/$bin"
