// Package setting is the error an options type's Validate returns for a
// setting out of its bounds. It names the setting as a library caller
// writes it (package, field) and holds the bound apart from the value, so
// that the command line can say the same thing in its own words,
// "--vocab 1: must be 2 or more", without checking the bound again.
package setting

import "fmt"

// Error is a setting whose value is out of its bounds.
type Error struct {
	// Package and Field name the setting: "sift" and "MaxSide".
	Package, Field string
	// Value is the value refused.
	Value any
	// Must says what the value must be, to follow "must be": "2 or
	// more", "in [0, 1)", "at least K = 1000: k-means needs a sampled
	// descriptor for every word".
	Must string
}

// Errorf returns an *Error for the setting field of pkg holding value;
// format and args say what the value must be.
func Errorf(pkg, field string, value any, format string, args ...any) error {
	return &Error{Package: pkg, Field: field, Value: value, Must: fmt.Sprintf(format, args...)}
}

// Name is the setting's name, "sift.MaxSide".
func (e *Error) Name() string { return e.Package + "." + e.Field }

func (e *Error) Error() string {
	v := e.Value
	if s, ok := v.(string); ok {
		v = fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%s: %s = %v: must be %s", e.Package, e.Field, v, e.Must)
}
