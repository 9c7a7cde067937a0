# The ldp image: the CLI, ldp controller and the Jobs it creates. DuckDB is linked through cgo,
# so the build needs gcc and the image glibc: Debian slim, not a static distroless base.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -o /out/ldp ./cmd/ldp

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/* && useradd --uid 10001 --create-home ldp
COPY --from=build /out/ldp /usr/local/bin/ldp
USER 10001
ENTRYPOINT ["ldp"]
