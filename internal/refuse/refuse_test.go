package refuse

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestRefusal(t *testing.T) {
	sentinel := Wrap(fmt.Errorf("partition exists: %w", fs.ErrExist))
	wrapped := fmt.Errorf("orders-0: %w", sentinel)
	for _, err := range []error{sentinel, wrapped, New("locked"), errors.Join(errors.New("other"), wrapped)} {
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%v is not a refusal", err)
		}
	}
	if !errors.Is(wrapped, sentinel) || !errors.Is(wrapped, fs.ErrExist) || wrapped.Error() != "orders-0: partition exists: file already exists" {
		t.Errorf("wrapping changed the error: %v", wrapped)
	}
	if errors.Is(errors.New("refused for safety"), ErrRefused) || Wrap(nil) != nil {
		t.Error("only what Wrap or New made is a refusal")
	}
}
