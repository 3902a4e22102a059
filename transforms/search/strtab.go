package search

import "strings"

// packStrings returns ss, in order, as substrings of one string: two
// allocations for a million image ids instead of a million, and one
// object for the garbage collector to mark.
func packStrings(ss []string) []string {
	var size int
	for _, s := range ss {
		size += len(s)
	}
	var b strings.Builder
	b.Grow(size)
	for _, s := range ss {
		b.WriteString(s)
	}
	all := b.String()
	out := make([]string, len(ss))
	at := 0
	for i, s := range ss {
		out[i] = all[at : at+len(s)]
		at += len(s)
	}
	return out
}

// stringsBytes returns the memory held by strings packed by packStrings:
// their bytes and their headers.
func stringsBytes(ss []string) int64 {
	n := 16 * int64(cap(ss))
	for _, s := range ss {
		n += int64(len(s))
	}
	return n
}

// arena holds strings that arrive in one order and are read in another:
// string i is buf[at[i] : at[i]+size[i]], appended in arrival order.
type arena struct {
	buf  []byte
	at   []int64
	size []uint32
}

func newArena(n int) arena {
	return arena{at: make([]int64, n), size: make([]uint32, n)}
}

// set appends s as string i.
func (a *arena) set(i int, s string) {
	a.at[i], a.size[i] = int64(len(a.buf)), uint32(len(s))
	a.buf = append(a.buf, s...)
}

// get returns string i ("" if never set).
func (a *arena) get(i int) string {
	return string(a.buf[a.at[i] : a.at[i]+int64(a.size[i])])
}

// bytes returns the memory the arena holds.
func (a *arena) bytes() int64 {
	return int64(cap(a.buf)) + 8*int64(cap(a.at)) + 4*int64(cap(a.size))
}
