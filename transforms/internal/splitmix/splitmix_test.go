package splitmix

import "testing"

// TestMix64Reference checks Mix64 against the reference SplitMix64 generator
// (Vigna's splitmix64.c): seeded with s, it returns Mix64(s + i·golden) as its
// i-th output, i = 0, 1, ….
func TestMix64Reference(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		want []uint64
	}{
		{0, []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f, 0xf88bb8a8724c81ec, 0x1b39896a51a8749b}},
		{1234567, []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423}},
	} {
		s := tc.seed
		for i, want := range tc.want {
			if got := Mix64(s); got != want {
				t.Errorf("seed %d, output %d: Mix64 = %#016x, want %#016x", tc.seed, i, got, want)
			}
			s += golden
		}
	}
}

func BenchmarkMix64(b *testing.B) {
	var z uint64
	for i := 0; b.Loop(); i++ {
		z ^= Mix64(uint64(i))
	}
	sink = z
}

var sink uint64
