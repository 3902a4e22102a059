package evaluate

import (
	"fmt"
	"slices"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/spatial"
)

// Verifier verifies the candidates of a Ranking (Ranking.Rerank) against
// their queries from the run's geometry rows (formats.Geometry), read in
// two passes over the geometry files, each a file at a time: the queries'
// rows first (AddQuery), which it keeps, then the candidates' (Verify),
// each verified against every query it is a candidate of and dropped. So
// it holds the shard's queries' keypoints and one row besides, never the
// collection's. An image without a geometry row is never verified, as
// search treats it. The keypoints are decoded and sorted as search loads
// them (all of them), and verified by spatial's default matcher, so a
// candidate gets the inliers search's re-ranking gives it.
type Verifier struct {
	r       *Ranking
	m       *spatial.Matcher
	queries map[string]*spatial.Geometry
	// pairs lists, by candidate id, the (query, candidate) indexes it is
	// a candidate at.
	pairs map[string][][2]int32
	kp    formats.Keypoints
	cand  spatial.Geometry
	// Verified counts the verifications done.
	Verified int
}

// NewVerifier returns a verifier of r's candidates.
func NewVerifier(r *Ranking) (*Verifier, error) {
	m, err := spatial.NewMatcher(spatial.DefaultOptions())
	if err != nil {
		return nil, fmt.Errorf("evaluate: spatial's default options: %w", err)
	}
	v := &Verifier{r: r, m: m, queries: map[string]*spatial.Geometry{}, pairs: map[string][][2]int32{}}
	for qi := range r.queries {
		for ci, c := range r.Candidates(qi) {
			v.pairs[c.ID] = append(v.pairs[c.ID], [2]int32{int32(qi), int32(ci)})
		}
	}
	return v, nil
}

// For returns a verifier of the candidates of r, a ranking of some of v's
// queries (by id: expanded, say), that verifies against the keypoints v
// holds of them: it needs only Verify's pass.
func (v *Verifier) For(r *Ranking) *Verifier {
	w := &Verifier{r: r, m: v.m, queries: v.queries, pairs: map[string][][2]int32{}}
	for qi := range r.queries {
		for ci, c := range r.Candidates(qi) {
			w.pairs[c.ID] = append(w.pairs[c.ID], [2]int32{int32(qi), int32(ci)})
		}
	}
	return w
}

// QueryIDs returns the ids of the queries, whose rows AddQuery takes.
func (v *Verifier) QueryIDs() []string {
	ids := make([]string, len(v.r.queries))
	for i, q := range v.r.queries {
		ids[i] = q.ID
	}
	return ids
}

// CandidateIDs returns the ids of the candidates, sorted, whose rows
// Verify takes.
func (v *Verifier) CandidateIDs() []string {
	ids := make([]string, 0, len(v.pairs))
	for id := range v.pairs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// AddQuery keeps the keypoints of a query's geometry row.
func (v *Verifier) AddQuery(row *formats.Geometry) error {
	g := &spatial.Geometry{}
	if err := v.decode(row, g); err != nil {
		return err
	}
	v.queries[row.ImageID] = g
	return nil
}

// Verify verifies the candidate of geometry row against every query it is
// a candidate of whose row AddQuery took.
func (v *Verifier) Verify(row *formats.Geometry) error {
	pairs := v.pairs[row.ImageID]
	if len(pairs) == 0 {
		return nil
	}
	if err := v.decode(row, &v.cand); err != nil {
		return err
	}
	for _, p := range pairs {
		q, ok := v.queries[v.r.queries[p[0]].ID]
		if !ok {
			continue
		}
		res := v.m.Verify(q, &v.cand)
		c := &v.r.cands[p[0]][p[1]]
		c.Inliers, c.Verified = res.Support, res.Verified
		v.Verified++
	}
	return nil
}

// decode writes row's keypoints into dst in the matcher's order.
func (v *Verifier) decode(row *formats.Geometry, dst *spatial.Geometry) error {
	n := len(row.WordIDs)
	if len(row.X) != n || len(row.Y) != n || len(row.LogScale) != n || len(row.Angle) != n {
		return fmt.Errorf("evaluate: image %s: geometry of %d words, %d x, %d y, %d scales and %d angles",
			row.ImageID, n, len(row.X), len(row.Y), len(row.LogScale), len(row.Angle))
	}
	row.Decode(&v.kp)
	dst.Reset()
	dst.Width, dst.Height = float32(row.Width), float32(row.Height)
	dst.Words = append(dst.Words, v.kp.Words...)
	dst.X, dst.Y = append(dst.X, v.kp.X...), append(dst.Y, v.kp.Y...)
	dst.Scale, dst.Angle = append(dst.Scale, v.kp.Scale...), append(dst.Angle, v.kp.Angle...)
	dst.Sort()
	return nil
}
