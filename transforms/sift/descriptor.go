package sift

import "math"

const (
	// The histogram carries a one-cell margin on each spatial side and one
	// extra orientation bin, so trilinear interpolation can spill over
	// without bounds tests; the margins are dropped and the extra bin wrapped
	// when the descriptor is read out.
	histRow = descBins + 2
	histCol = (descWidth + 2) * histRow
	histLen = (descWidth + 2) * histCol
)

// descScratch holds per-keypoint descriptor buffers.
type descScratch struct {
	hist [histLen]float32
	raw  [DescriptorSize]float32
	wt   []float32
}

// compute writes the descriptor of k, sampled from its Gaussian scale g
// (w×h), to dst (Lowe §6, as OpenCV's calcSIFTDescriptor).
//
// The patch around the keypoint is divided into a 4×4 grid of cells, each
// 3σ wide, in a frame rotated to the keypoint's orientation. Every pixel in
// the patch contributes its gradient magnitude, weighted by a Gaussian of σ
// equal to half the grid width (2 cells), to an 8-bin histogram of gradient
// orientation relative to the keypoint's. The contribution is spread by
// trilinear interpolation over the two nearest cells in each spatial
// direction and the two nearest orientation bins, so that small shifts and
// rotations change the descriptor smoothly. The 128-vector is normalised to
// unit length, clamped at 0.2 (which de-emphasises large gradient magnitudes,
// unreliable under non-linear illumination changes), renormalised, and
// quantised to bytes by ×512 with saturation.
func (s *descScratch) compute(g []float32, w, h int, k *kpoint, dst []byte) {
	const (
		d = descWidth
		n = descBins
	)
	ori := 360 - k.angle // back to OpenCV's y-up histogram angle
	if abs32(ori-360) < flt32Epsilon {
		ori = 0
	}
	px, py := cvRound(k.x), cvRound(k.y)
	rad := float64(ori) * (math.Pi / 180)
	cosT := float32(math.Cos(rad))
	sinT := float32(math.Sin(rad))
	const binsPerDeg = float32(n) / 360
	expScale := float32(-1.0 / (d * d * 0.5))
	histWidth := float32(descSclFactor) * k.sigma
	// The rotated grid (d+1 cells wide, counting the interpolation margin)
	// fits in a circle of this radius.
	radius := cvRound(histWidth * math.Sqrt2 * (d + 1) * 0.5)
	radius = min(radius, int(math.Sqrt(float64(w)*float64(w)+float64(h)*float64(h))))
	cosT /= histWidth
	sinT /= histWidth

	// The Gaussian weight depends only on the distance to the keypoint, so
	// exp(−(i²+j²)·c) = exp(−i²·c)·exp(−j²·c): one table per keypoint.
	if cap(s.wt) < radius+1 {
		s.wt = make([]float32, radius+1)
	}
	wt := s.wt[:radius+1]
	ws := expScale / (histWidth * histWidth)
	for t := range wt {
		wt[t] = float32(math.Exp(float64(float32(t*t) * ws)))
	}

	hist := s.hist[:]
	clear(hist)
	for i := -radius; i <= radius; i++ {
		r := py + i
		if r <= 0 || r >= h-1 {
			continue
		}
		row := g[r*w : r*w+w]
		up := g[(r-1)*w : (r-1)*w+w]
		dn := g[(r+1)*w : (r+1)*w+w]
		wi := wt[absInt(i)]
		fi := float32(i)
		for j := -radius; j <= radius; j++ {
			c := px + j
			if c <= 0 || c >= w-1 {
				continue
			}
			// Sample position in grid units, rotated by −ori; subtracting
			// 0.5 puts cell centres at integers, so a sample at a cell
			// centre goes entirely to that cell.
			fj := float32(j)
			cRot := fj*cosT - fi*sinT
			rRot := fj*sinT + fi*cosT
			rbin := rRot + d/2 - 0.5
			cbin := cRot + d/2 - 0.5
			if !(rbin > -1 && rbin < d && cbin > -1 && cbin < d) {
				continue
			}
			dx := row[c+1] - row[c-1]
			dy := up[c] - dn[c]
			mag := float32(math.Sqrt(float64(dx*dx+dy*dy))) * wi * wt[absInt(j)]
			obin := (fastAtan2(dy, dx) - ori) * binsPerDeg

			r0 := floor32(rbin)
			c0 := floor32(cbin)
			o0 := floor32(obin)
			rbin -= float32(r0)
			cbin -= float32(c0)
			obin -= float32(o0)
			if o0 < 0 {
				o0 += n
			}
			if o0 >= n {
				o0 -= n
			}

			vr1 := mag * rbin
			vr0 := mag - vr1
			vrc11 := vr1 * cbin
			vrc10 := vr1 - vrc11
			vrc01 := vr0 * cbin
			vrc00 := vr0 - vrc01
			vrco111 := vrc11 * obin
			vrco110 := vrc11 - vrco111
			vrco101 := vrc10 * obin
			vrco100 := vrc10 - vrco101
			vrco011 := vrc01 * obin
			vrco010 := vrc01 - vrco011
			vrco001 := vrc00 * obin
			vrco000 := vrc00 - vrco001

			idx := ((r0+1)*(d+2)+c0+1)*(n+2) + o0
			hb := hist[idx : idx+histCol+histRow+2]
			hb[0] += vrco000
			hb[1] += vrco001
			hb[histRow] += vrco010
			hb[histRow+1] += vrco011
			hb[histCol] += vrco100
			hb[histCol+1] += vrco101
			hb[histCol+histRow] += vrco110
			hb[histCol+histRow+1] += vrco111
		}
	}

	raw := s.raw[:]
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			idx := ((i+1)*(d+2) + (j + 1)) * (n + 2)
			hist[idx] += hist[idx+n]
			hist[idx+1] += hist[idx+n+1]
			copy(raw[(i*d+j)*n:(i*d+j+1)*n], hist[idx:idx+n])
		}
	}

	var nrm2 float32
	for _, v := range raw {
		nrm2 += v * v
	}
	thr := float32(math.Sqrt(float64(nrm2))) * descMagThr
	nrm2 = 0
	for i, v := range raw {
		v = min(v, thr)
		raw[i] = v
		nrm2 += v * v
	}
	scale := descIntFactor / max(float32(math.Sqrt(float64(nrm2))), flt32Epsilon)
	dst = dst[:len(raw)]
	for i, v := range raw {
		q := math.RoundToEven(float64(v * scale))
		dst[i] = byte(min(max(q, 0), 255))
	}
}

// floor32 is ⌊x⌋ for the small finite values used as bin coordinates.
func floor32(x float32) int {
	i := int(x)
	if float32(i) > x {
		i--
	}
	return i
}
