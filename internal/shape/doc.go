// Package shape holds no code: its test keeps the hand-written Go of the
// repository small enough to hold in one's head — files, functions,
// packages and method sets within the limits of docs/architecture.md,
// "Shape" — with a list of known exceptions that may shrink but not grow.
package shape
