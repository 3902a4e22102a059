// Package splitmix holds SplitMix64's output function, the integer hash the
// pipeline's stages use to derive seeds and priorities from seeds, counters
// and indices.
package splitmix

// golden is SplitMix64's increment, ⌊2⁶⁴/φ⌋ (odd): the generator's state
// advances by golden per output.
const golden = 0x9e3779b97f4a7c15

// Mix64 is SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014, with Stafford's "Mix13"
// constants as in Vigna's splitmix64.c): it adds the increment, then applies
// two xor-shift-multiply rounds and a final xor-shift, so that the SplitMix64
// generator seeded with s returns Mix64(s), Mix64(s+golden), ….
//
// Why: Mix64 is a bijection of uint64 in which every output bit depends on
// every input bit, so nearby inputs — seed and seed+1, consecutive indices,
// a seed xor a small counter — give unrelated outputs. Callers that turn a
// seed and an index into a sub-seed or a sampling priority need exactly
// that; used directly, such structured values would correlate what they
// seed. Its values end up in the pipeline's outputs, so it must never
// change.
func Mix64(z uint64) uint64 {
	z += golden
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
