# One image for the operator (`/manager operator`), each tenant's kernel
# (`/sms-kernel kernel`, which links none of the operator's packages) and
# the isolated executor's children (`/sms-sandbox`, which links only the
# JavaScript runtime and its side of the protocol). Build it with `make
# docker-build`.

# Build the binaries.
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH

WORKDIR /workspace
# Copy the Go Modules manifests
COPY go.mod go.mod
COPY go.sum go.sum
# cache deps before building and copying source so that we don't need to re-download as much
# and so that source changes don't invalidate our downloaded layer
RUN go mod download

# Copy the Go source (relies on .dockerignore to filter)
COPY . .

# Build static binaries (no cgo: the SQLite driver is pure Go). GOARCH has no
# default so that the binary matches the platform the image is built for.
# -tags nodev leaves out `manager dev` and its embedded control plane.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -tags nodev -trimpath -ldflags="-s -w" -o /out/ ./cmd/manager ./cmd/sms-kernel ./cmd/sms-sandbox

# An empty base: the binary is static. Kernels call model APIs over HTTPS,
# so the builder's CA bundle comes along.
FROM scratch
WORKDIR /
COPY --from=builder /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=builder /out/manager /out/sms-kernel /out/sms-sandbox /
USER 65532:65532

ENTRYPOINT ["/manager"]
