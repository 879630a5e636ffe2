package fielderr

import (
	"errors"
	"fmt"
	"testing"
)

func TestError(t *testing.T) {
	err := fmt.Errorf("run: %w", New("MaxLag", "want at least %d ms, got %d", 1, 0))
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatal("not found in the chain")
	}
	if got := fe.Error(); got != "MaxLag: want at least 1 ms, got 0" {
		t.Errorf("Error() = %q", got)
	}
	if got := fe.Named("--max-lag"); got != "--max-lag: want at least 1 ms, got 0" {
		t.Errorf("Named = %q", got)
	}
}
