# syntax=docker/dockerfile:1
# effectivepolicy-apiserver for users with Docker (or any BuildKit builder):
#   docker build -t effectivepolicy-apiserver:dev .
# Multi-stage: a static binary (CGO off) built with the module's Go, stamped by hack/ldflags.sh
# with the checkout's version and commit (the build context includes .git for that), on a
# distroless base that holds nothing but CA certificates and tzdata, run as the non-root user
# 65532 that artifacts/ and the chart expect (runAsUser 65532, read-only root filesystem; the
# cache directory /var/cache/effectivepolicy is a mounted volume).
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "$(hack/ldflags.sh)" \
      -o /out/effectivepolicy-apiserver ./cmd/effectivepolicy-apiserver

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/effectivepolicy-apiserver /effectivepolicy-apiserver
USER 65532:65532
ENTRYPOINT ["/effectivepolicy-apiserver"]
