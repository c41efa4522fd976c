// Command kgateway-oracle reads a multi-document YAML of Gateway API objects and kgateway
// policies on stdin (or from the files named as arguments, answered in one run) and prints, as
// JSON, what kgateway v2.2.0's own translator makes of it (README.md describes the output).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kgateway/kgatewayoracle"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kgateway-oracle:", err)
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
	bin, dir, err := kgatewayoracle.Binary(ctx)
	if err != nil {
		return err
	}
	results, err := kgatewayoracle.Run(ctx, bin, dir, inputs...)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	if len(files) == 0 {
		return enc.Encode(results[0])
	}
	return enc.Encode(results)
}
