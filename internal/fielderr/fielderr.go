// Package fielderr is the error a library gives for an option it refuses.
// It names the option as the library's callers set it, the Options field;
// a command that took the value from a flag names the flag instead
// (Error.Named).
package fielderr

import "fmt"

// Error is an option value a library refuses.
type Error struct {
	Field string // the Options field as Go names it: "MaxLag"
	Msg   string // what is wrong with its value
}

// New returns the Error for field, its message formatted from format and args.
func New(field, format string, args ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Named(e.Field) }

// Named is the message with the option called name.
func (e *Error) Named(name string) string { return name + ": " + e.Msg }
