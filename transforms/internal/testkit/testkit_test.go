package testkit

import (
	"errors"
	"testing"
)

// recorder is a testing.TB that records whether the check failed.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }

// MustPanic fails a test whose call does not panic, or panics without
// the text wanted, and passes one that does, whatever the panic's type.
func TestMustPanic(t *testing.T) {
	var nilMap map[string]int
	for _, tc := range []struct {
		name, want string
		f          func()
		fail       bool
	}{
		{"no panic", "", func() {}, true},
		{"other text", "ragged", func() { panic("nn: short x") }, true},
		{"the text", "short", func() { panic("nn: short x") }, false},
		{"an error", "closed", func() { panic(errors.New("file closed")) }, false},
		{"a runtime error, any panic", "", func() { nilMap["x"] = 1 }, false},
	} {
		r := &recorder{TB: t}
		MustPanic(r, tc.name, tc.want, tc.f)
		if r.failed != tc.fail {
			t.Errorf("%s: failed %v, want %v", tc.name, r.failed, tc.fail)
		}
	}
}
