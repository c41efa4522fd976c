package app

import (
	"errors"
	"fmt"
)

// ExitError is an error that asks for an exit status of its own. diff
// exits as kubectl diff does — 1 when something would change (an
// ExitError without a message), >1 on an error — so that a script can
// tell a change from a failure; the other commands exit 1 on any error.
type ExitError struct {
	Code int
	// Err is what to print; nil prints nothing (diff's changes are on
	// standard output already).
	Err error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the exit status of a command that returned err: 0 for nil,
// an ExitError's code, 1 for any other error.
func ExitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	return 1
}

// Message is what to print for err ("" for nothing).
func Message(err error) string {
	var ee *ExitError
	if err == nil || errors.As(err, &ee) && ee.Err == nil {
		return ""
	}
	return err.Error()
}
