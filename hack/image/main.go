// Command image assembles and unpacks the server's container image without a
// container engine or a registry (make image, and the e2e test that runs the
// image's own entrypoint), with go-containerregistry:
//
//	image build -binary BIN -o OUT.tar [-tag REF]... [-arch amd64] [-version V] [-created RFC3339]
//	image extract -i IMAGE.tar -o DIR
//
// build writes a docker-archive tarball (`docker load` / `podman load -i`
// take it) of a FROM-scratch image: the static binary as its entrypoint, an
// /etc/passwd and /etc/group naming the non-root user 65532 it runs as (the
// user artifacts/ and the chart expect), /tmp, and the cache directory the
// Deployment mounts a volume on. Every file has a fixed owner and time, so the
// same binary and flags give the same image digest.
//
// extract unpacks an image's flattened filesystem into DIR and prints its
// configuration (entrypoint, user, ...) as JSON on stdout.
//
// It is a module of its own so that the product's go.mod does not take
// go-containerregistry's dependencies.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|extract [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "extract":
		err = extract(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (build or extract)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}
