package setting

import (
	"errors"
	"fmt"
	"testing"
)

func TestError(t *testing.T) {
	err := fmt.Errorf("vocabulary: %w", Errorf("kmeans", "K", 0, "%d or more", 1))
	if got, want := err.Error(), "vocabulary: kmeans: K = 0: must be 1 or more"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Name() != "kmeans.K" || e.Value != 0 || e.Must != "1 or more" {
		t.Errorf("errors.As: %+v", e)
	}
	if got, want := Errorf("bow", "TF", "cube", "raw, sqrt or log").Error(), `bow: TF = "cube": must be raw, sqrt or log`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
