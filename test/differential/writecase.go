package differential

import "fmt"

// WriteCase shrinks a disagreement and writes it as a case.
func WriteCase(o Oracle, r Outcome, want Check) (string, error) {
	return "", fmt.Errorf("not yet")
}
