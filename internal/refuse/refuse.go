// Package refuse marks the errors of operations logtool declines for
// safety (a broker holds the lock, an output exists, a checkpoint would be
// replaced), so that one place maps them to exit code 4, however deeply a
// feature wraps them.
package refuse

import "errors"

// ErrRefused is what every refusal is, for errors.Is.
var ErrRefused = errors.New("refused for safety")

type refusal struct{ err error }

func (r *refusal) Error() string        { return r.err.Error() }
func (r *refusal) Unwrap() error        { return r.err }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

// New returns a refusal with this message.
func New(msg string) error { return &refusal{errors.New(msg)} }

// Wrap marks err as a refusal, its message unchanged; nil stays nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &refusal{err}
}
