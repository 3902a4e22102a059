package index

import "github.com/bowline/bowline/learners/sparse"

// ExpandQuery returns the expanded query of average query expansion
// (Chum, Philbin, Sivic, Isard & Zisserman, "Total Recall", ICCV 2007): the bag of words q plus bags
// (the query's verified best results), summed in their order and
// L2-normalised; q itself without bags. Search's Refine.Expand and the
// job's +sv+qe evaluation rows both search the index again with it, so
// the rows measure what search returns.
func ExpandQuery(q sparse.Vector, bags []sparse.Vector) sparse.Vector {
	if len(bags) == 0 {
		return q
	}
	exp := q
	for _, b := range bags {
		exp = sparse.Add(exp, b)
	}
	sparse.Normalize(exp)
	return exp
}
