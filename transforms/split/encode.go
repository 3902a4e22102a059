package split

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// MarshalBinary encodes the selector, so that workers can each select from
// their share of the images and send their selectors to be merged
// (UnmarshalBinary, Merge). The encoding is the same for the same state.
func (s *Selector) MarshalBinary() ([]byte, error) {
	b := binary.AppendUvarint(nil, s.seed)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.fraction))
	b = binary.AppendUvarint(b, uint64(len(s.labels)))
	for _, l := range sortedLabels(s.labels) {
		st := s.labels[l]
		b = appendString(b, l)
		b = binary.AppendUvarint(b, uint64(st.count))
		b = binary.AppendUvarint(b, uint64(st.offered))
		b = binary.AppendUvarint(b, uint64(len(st.kept)))
		for _, c := range st.kept {
			b = binary.LittleEndian.AppendUint64(b, c.key)
			b = appendString(b, c.id)
		}
	}
	return b, nil
}

// UnmarshalBinary restores a selector encoded by MarshalBinary.
func (s *Selector) UnmarshalBinary(b []byte) error {
	d := decoder{b: b}
	seed := d.uvarint()
	fraction := math.Float64frombits(d.uint64())
	n := d.uvarint()
	if d.err == nil && n > uint64(len(b)) {
		d.err = errors.New("label count beyond the data")
	}
	labels := make(map[string]*stratum, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		l := d.string()
		st := &stratum{count: int(d.uvarint()), offered: int(d.uvarint())}
		k := d.uvarint()
		if d.err == nil && k > uint64(len(b)) {
			d.err = errors.New("candidate count beyond the data")
		}
		for j := uint64(0); j < k && d.err == nil; j++ {
			key := d.uint64()
			st.kept = append(st.kept, candidate{key, d.string()})
		}
		labels[l] = st
	}
	switch {
	case d.err != nil:
		return fmt.Errorf("split: decoding a selector: %w", d.err)
	case len(d.b) != 0:
		return fmt.Errorf("split: decoding a selector: %d bytes left over", len(d.b))
	case checkFraction(fraction) != nil:
		return checkFraction(fraction)
	}
	for l, st := range labels {
		st.quota = Quota(st.count, fraction)
		if len(st.kept) > st.quota || st.offered > st.count {
			return fmt.Errorf("split: decoding a selector: label %q keeps %d of a quota of %d, offered %d of %d", l, len(st.kept), st.quota, st.offered, st.count)
		}
	}
	*s = Selector{seed: seed, fraction: fraction, labels: labels}
	return nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decoder reads what MarshalBinary wrote; its first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errors.New("truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = errors.New("truncated")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errors.New("truncated")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
