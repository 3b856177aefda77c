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

# --test: also run the Go tests that the patches add (always rebuilds).
# --test-only: run those tests and leave the binary as it is (npm test).
run_tests=0
test_only=0
if [[ "${1:-}" == "--test" ]]; then
  run_tests=1
elif [[ "${1:-}" == "--test-only" ]]; then
  run_tests=1
  test_only=1
fi

if [[ -x "$bin" && "$run_tests" == 0 ]]; then
  stale=0
  for src in go.mod go.sum *.go patches/*.patch; do
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

# FerretDB is built from a patched copy (patches/*.patch, see the README): the
# module is downloaded through the Go module proxy as usual, copied to a temp
# directory, patched there, and swapped in with a `replace` in a temporary
# modfile, so go.mod itself stays the plain upstream dependency.
module=github.com/FerretDB/FerretDB
if ! command -v git >/dev/null 2>&1; then
  echo "Building the embedded database needs git (to apply tools/ferretdb/patches) — or set MONGODB_URI to use an existing MongoDB." >&2
  exit 3
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$(GOFLAGS=-mod=mod go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
if [[ -z "$src" || ! -d "$src" ]]; then
  echo "Could not download $module through the Go module proxy." >&2
  exit 1
fi
cp -R "$src" "$work/ferretdb"
chmod -R u+w "$work/ferretdb"
for patch in patches/*.patch; do
  # GIT_CEILING_DIRECTORIES keeps git from finding an enclosing repository: a plain patch run.
  if ! (cd "$work/ferretdb" && GIT_CEILING_DIRECTORIES="$work" git apply --whitespace=nowarn "$OLDPWD/$patch"); then
    echo "The FerretDB patch $patch no longer applies to $module (did go.mod change its version?)." >&2
    exit 1
  fi
done
if [[ "$run_tests" == 1 ]]; then
  # FerretDB's version package wants this file, which the module zip lacks,
  echo "v1.24.2" >"$work/ferretdb/build/version/version.txt"
  # and its test helpers look for the repository root by a .git entry.
  mkdir -p "$work/ferretdb/.git"
  (cd "$work/ferretdb" && CGO_ENABLED=0 GOFLAGS=-mod=mod go test -count=1 -run 'TestPrepareWhereClause' ./internal/backends/sqlite/ && CGO_ENABLED=0 GOFLAGS=-mod=mod go test -count=1 -run 'TestHeldUpdate' ./internal/handler/)
fi
cp go.mod "$work/go.mod"
cp go.sum "$work/go.sum"
echo "replace $module => $work/ferretdb" >>"$work/go.mod"
if [[ "$run_tests" == 1 ]]; then
  # The launcher's own tests (its logging), against the patched copy.
  CGO_ENABLED=0 GOFLAGS=-mod=mod go test -modfile="$work/go.mod" -count=1 -tags ferretdb_no_postgresql .
  if [[ "$test_only" == 1 ]]; then
    exit 0
  fi
fi

# modernc.org/sqlite is pure Go, so no C toolchain is needed.
# ferretdb_no_postgresql leaves out the unused PostgreSQL backend.
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -modfile="$work/go.mod" -trimpath -buildvcs=false -tags ferretdb_no_postgresql -ldflags='-s -w' -o "$bin" .
echo "built $PWD/$bin (FerretDB with $(ls patches/*.patch | wc -l) patch(es) from patches/)"
