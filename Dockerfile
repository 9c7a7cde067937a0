# The ldp image: the CLI, ldp controller and the Jobs it creates. DuckDB is linked through cgo,
# so the build needs gcc and the image glibc: Debian slim, not a static distroless base.
FROM golang:1.26-bookworm AS build
WORKDIR /src
# third_party holds the patched iceberg-go go.mod replaces iceberg-go with: go mod download reads it.
COPY go.mod go.sum ./
COPY third_party ./third_party
RUN go mod download
COPY . .
# -s -w: no symbol table or DWARF (a quarter of the binary); panics keep their stack traces.
# No -tags nokube: the controller needs the Kubernetes packages, so the image holds the one full
# binary (make build's slim bin/ldp runs a full ldp-kube for those verbs; docs/cli.md).
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/ldp ./cmd/ldp

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/* && useradd --uid 10001 --create-home ldp
COPY --from=build /out/ldp /usr/local/bin/ldp
USER 10001
ENTRYPOINT ["ldp"]
