#!/usr/bin/env bash
# Refresh this copy of iceberg-go from the module cache and apply ldp's patch (README.md).
# Usage: third_party/iceberg-go/update.sh v0.7.0
set -euo pipefail
ver=${1:?usage: update.sh VERSION (e.g. v0.7.0)}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
src=$(cd "$repo" && go mod download -json "github.com/apache/iceberg-go@$ver" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "iceberg-go $ver is not in the module cache" >&2; exit 1; }

find "$here" -mindepth 1 ! -name README.md ! -name update.sh -delete
(cd "$src" && find . -type f ! -name '*_test.go' ! -path '*/testdata/*' ! -path './cmd/*' \
    ! -path './dev/*' ! -path './website/*' ! -path './internal/recipe/*' ! -path './.*' \
    ! -name '*.md' ! -name Makefile ! -name go.sum -print0 | xargs -0 cp --parents -t "$here")
chmod -R u+w "$here"
# Each write-up's diff, in turn: the lazy substrait collection, the lazy Avro schemas.
for doc in iceberg-go-lazy-substrait.md iceberg-go-lazy-avro-schemas.md; do
    sed -n '/^```diff$/,/^```$/p' "$repo/docs/upstream/$doc" | sed '1d;$d' | patch -d "$here" -p1
done
echo "iceberg-go $ver copied to $here and patched; now: go mod tidy && go build ./... && go test ./cmd/ldp -run TestStartupSkipsSubstraitYAML"
