// Package finite finds the values a float computation cannot take: NaN and
// the infinities.
package finite

import "math"

// Index returns the index of the first NaN or infinite value of x, or −1 if
// every value is finite.
func Index(x []float32) int {
	for i, v := range x {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return i
		}
	}
	return -1
}
