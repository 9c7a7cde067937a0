#!/usr/bin/env bash
# Builds SeaweedFS's weed (an Iceberg REST catalog with S3 storage, Apache-2.0) for the REST
# test tier, `make test-rest`, from the Go module proxy: about nine minutes on two cores.
#
# SeaweedFS cannot be built with `go install` as it is (one of its dependencies moved), so it
# is built from a wrapper module in a temporary folder, outside this repository, with one
# replace directive. The binary goes to $LDP_TOOLS (default ~/.cache/ldp-tools)/weed, where the
# tests and .ci/run look for it.
set -euo pipefail
version=v0.0.0-20261109003541-7506e5f91cd6
out="${LDP_TOOLS:-${HOME}/.cache/ldp-tools}"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > go.mod <<MOD
module ldp.local/weedwrap

go 1.26.0

require github.com/seaweedfs/seaweedfs ${version}

replace github.com/tyler-smith/go-bip39 => github.com/cosmos/go-bip39 v1.0.0
MOD
go get "github.com/seaweedfs/seaweedfs/weed@${version}"
go build -o "$out/weed" github.com/seaweedfs/seaweedfs/weed
echo "built $out/weed"
