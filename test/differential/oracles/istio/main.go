// Command istio-oracle reads a multi-document YAML of Gateway API Gateways, Services and Istio
// policies on stdin (or from the files named as arguments, answered in one run) and prints, as JSON,
// which policies istio.io/istio's own code applies to each Gateway and Service waypoint (README.md).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/istio/istiooracle"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "istio-oracle:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, files []string) error {
	var inputs [][]byte
	if len(files) == 0 {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		inputs = append(inputs, b)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		inputs = append(inputs, b)
	}
	bin, err := istiooracle.Binary(ctx)
	if err != nil {
		return err
	}
	results, err := istiooracle.Run(ctx, bin, inputs...)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if len(files) == 0 {
		return enc.Encode(results[0])
	}
	return enc.Encode(results)
}
