package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/bowline/bowline/transforms/sift"
)

// schemeRE matches the scheme of a URI ("gs:", "s3:", "synthetic:").
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]+:`)

// LocalPath reports whether p names a file on the machine at hand: it has
// no URI scheme, or the scheme is file:. An empty p is not a path.
func LocalPath(p string) bool {
	if p == "" {
		return false
	}
	s := schemeRE.FindString(p)
	return s == "" || strings.EqualFold(s, "file:")
}

// isDirectory is the rule of the flags that name a directory: a local
// path that names a file is refused, before the command opens a lock or a
// run below it ("not a directory" from deep inside); a path that does not
// exist yet, or a URI, is the command's to make or read.
func isDirectory(v any, _ *flag.FlagSet) string {
	p, _ := v.(string)
	if !LocalPath(p) || schemeRE.MatchString(p) {
		return ""
	}
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return "is a file, not a directory"
	}
	return ""
}

// WholeNumber parses decimal digits only, at most 9 of them: strconv.Atoi
// also takes a sign ("+5"), which no one means by a count.
func WholeNumber(s string) (int, error) {
	if s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return strconv.Atoi(s)
}

// CountOrSwitch parses the value of a count that can also be switched on
// or off: "true" is def, "false" is 0, else a WholeNumber. Query's
// --expand and the service's expand= and near= are such counts.
func CountOrSwitch(s string, def int) (int, error) {
	switch s {
	case "true":
		return def, nil
	case "false":
		return 0, nil
	}
	n, err := WholeNumber(s)
	if err != nil {
		return 0, fmt.Errorf("want true, false or a whole number, 0 or more")
	}
	return n, nil
}

// Count is a flag.Value of a CountOrSwitch: --name alone is Default,
// --name N and --name=N are N (ParseArgs joins the first into the second,
// as the flag package does not), --name=false is 0.
type Count struct{ N, Default int }

func (c *Count) String() string {
	if c == nil {
		return "0"
	}
	return strconv.Itoa(c.N)
}

// Set takes what CountOrSwitch does.
func (c *Count) Set(s string) error {
	n, err := CountOrSwitch(s, c.Default)
	if err != nil {
		return err
	}
	c.N = n
	return nil
}

// Get returns the count, an int.
func (c *Count) Get() any { return c.N }

// IsBoolFlag lets the flag stand alone.
func (c *Count) IsBoolFlag() bool { return true }

// countOrSwitch is a flag.Value that may stand alone as a switch or take a
// whole number (Count, Doubling): ParseArgs joins "--name N" into
// "--name=N", and --help shows it as "--name [N]".
type countOrSwitch interface {
	flag.Value
	IsBoolFlag() bool
	countOrSwitch()
}

func (*Count) countOrSwitch() {}

// Doubling is the flag.Value of SIFT's doubling, sift.Options' DoubleImage
// and DoubleBelow: true doubles every image, false none, and N (a whole
// number, 2 or more) the images whose longer side, after the MaxSide
// downscale, is below N pixels. Alone it is true; 0 and 1 are false and
// true, as for a switch (strconv.ParseBool), which it extends. Get returns
// the bool, or the bound N, an int.
type Doubling struct{ O *sift.Options }

func (d Doubling) countOrSwitch() {}

// IsBoolFlag lets the flag stand alone.
func (d Doubling) IsBoolFlag() bool { return true }

func (d Doubling) String() string {
	if d.O == nil {
		return ""
	}
	return fmt.Sprint(d.Get())
}

// Set takes true, false (as strconv.ParseBool) or a WholeNumber.
func (d Doubling) Set(s string) error {
	if b, err := strconv.ParseBool(s); err == nil {
		setDoubling(d.O, b)
		return nil
	}
	n, err := WholeNumber(s)
	if err != nil {
		return fmt.Errorf("want true, false or a side in pixels")
	}
	setDoubling(d.O, n)
	return nil
}

// Get returns DoubleBelow if it is set, else DoubleImage
// (sift.Options.Doubling).
func (d Doubling) Get() any { return d.O.Doubling() }

// setDoubling sets o's doubling to v, a Doubling's Get.
func setDoubling(o *sift.Options, v any) {
	switch x := v.(type) {
	case bool:
		o.DoubleImage, o.DoubleBelow = x, 0
	case int:
		o.DoubleImage, o.DoubleBelow = true, x
	default:
		panic(fmt.Sprintf("cmdline: a doubling of %T", v))
	}
}

// joinCounts returns args with each "--name N" of a countOrSwitch flag of fs
// written "--name=N", so that the flag package, which lets a flag that
// may stand alone take no separate value, reads N as its value and not as
// the first argument after the flags. It reads args as fs.Parse does:
// flags up to "--" or the first argument that is not one, a flag of a
// value that is not a switch taking the next argument whole.
func joinCounts(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return append(out, args[i+1:]...)
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if _, ok := f.Value.(countOrSwitch); ok {
			if i+1 < len(args) {
				if _, err := WholeNumber(args[i+1]); err == nil {
					out[len(out)-1] = a + "=" + args[i+1]
					i++
				}
			}
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

// ByteSize is a flag value of bytes with an optional unit (KiB, MiB, GiB,
// KB, MB, GB or B).
type ByteSize int64

func (b *ByteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

// Get returns the bytes, an int64, for the flag's rule (cmdline).
func (b *ByteSize) Get() any { return int64(*b) }

func (b *ByteSize) Set(s string) error {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return errors.New("want a size in bytes, or with a unit such as 10MiB or 500KB")
	}
	*b = ByteSize(v * float64(mult))
	return nil
}
