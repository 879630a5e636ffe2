// Package logfmt reads and writes the bytes of Kafka log segments: legacy
// messages (magic 0 and 1), record batches (magic 2), their records, and the
// segment files that hold them.
package logfmt

import (
	"errors"
	"fmt"
)

// CorruptError reports bytes that are not what Kafka would have written. It is
// the one error type every parser in logtool returns for bad input, so that
// commands can name the file and byte position and pick exit code 1.
type CorruptError struct {
	File string // path of the file, empty when parsing memory
	Pos  int64  // byte position where the bad structure starts; -1 if unknown
	Msg  string // what is wrong, in words
	Err  error  // underlying cause, if any
}

func (e *CorruptError) Error() string {
	s := e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.File != "" {
		s = e.File + ": " + s
	}
	if e.Pos >= 0 {
		s += fmt.Sprintf(" (at byte %d)", e.Pos)
	}
	return s
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ErrNoInnerMessages is the cause of the CorruptError of a compressed legacy
// wrapper whose inner message set is empty, which Kafka rejects ("invalid
// compressed record set with no inner records"). Its record count is known:
// zero.
var ErrNoInnerMessages = errors.New("no inner messages")

// Corruptf builds a CorruptError.
func Corruptf(file string, pos int64, format string, args ...any) *CorruptError {
	return &CorruptError{File: file, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// AsCorrupt returns the CorruptError inside err, if there is one.
func AsCorrupt(err error) (*CorruptError, bool) {
	var ce *CorruptError
	ok := errors.As(err, &ce)
	return ce, ok
}

// WithFile returns err with File set when err is a CorruptError without one,
// and pos added to its position. Parsers of in-memory slices report positions
// relative to the slice; callers that know where the slice came from rebase them.
func WithFile(err error, file string, base int64) error {
	ce, ok := AsCorrupt(err)
	if !ok {
		return err
	}
	c := *ce
	if c.File == "" {
		c.File = file
	}
	if c.Pos >= 0 {
		c.Pos += base
	}
	return &c
}
