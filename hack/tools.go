//go:build tools

// Package tools pins build-time tools in go.mod so `go run` and
// kube_codegen.sh use the versions this module requires.
package tools

import (
	_ "k8s.io/code-generator"
)
