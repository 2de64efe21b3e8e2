package tc

import (
	"errors"
	"fmt"
)

// ErrNotSupported is wrapped by every error that means "this kernel or this
// backend cannot do that", so callers can pick another backend or skip.
var ErrNotSupported = errors.New("not supported")

// NotSupportedError names the missing feature and why it is missing.
type NotSupportedError struct {
	Feature string // "netem", "htb", "tbf", "ifb", or a parameter name
	Reason  string // what the kernel said, or what would be needed
}

func (e *NotSupportedError) Error() string {
	return fmt.Sprintf("%s not supported: %s", e.Feature, e.Reason)
}

// Unwrap makes errors.Is(err, ErrNotSupported) true.
func (e *NotSupportedError) Unwrap() error { return ErrNotSupported }

func notSupported(feature, format string, args ...any) error {
	return &NotSupportedError{Feature: feature, Reason: fmt.Sprintf(format, args...)}
}
