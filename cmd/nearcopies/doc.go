// Command nearcopies measures how well a finished run finds the source of
// a near-copy of one of its own photos: issue 24's goal that a copy turned
// a quarter turn, cropped to 80% of each side and re-encoded as JPEG finds
// its source first.
//
//	go run ./cmd/nearcopies --run /tmp/eth10k --n 100 --methods solis-ada,solis-da,tfidf --rerank 100 [--near 10] [--expand 50] [--out copies.json]
//
// It draws --n of the run's images (by --seed, from the run's ids in id
// order; held-out or not, every image is indexed, and the question is
// whether the copy finds it), reads each from its location in the run
// (a relative one from --image_root, else the working directory, as the
// job's --input was relative to where it ran) and makes its copy in
// memory: turned --rotate degrees clockwise as displayed (a multiple of
// 90: pixels moved, never resampled, and never mirrored, which SIFT does
// not match and spatial verification refuses), cut to --crop of each side
// at a place drawn from the seed and the image (not always the centre),
// and encoded as a JPEG of --quality. The copy's bytes are then searched
// as a user's photo is (search.SearchImageRefined: decoded, described,
// quantised and weighted with the run's settings) under each method, as
// the learner ranks it ("plain"), with its best --rerank verified and
// re-ranked ("+sv"), with --near N also verifying the copy's best N
// near-copy candidates, the images whose rarest --near_words words it
// holds most of ("+sv+nc": search.Refine.NearCopies), and, with --expand
// N, also expanded ("+sv+qe").
//
// For each method and mode it prints how many copies find their source
// first and in the top 10, the source's median and mean rank, and the
// 50th and 95th percentile of a query's time (decoding, description,
// quantisation, search and verification: the time a user waits, on the
// calling goroutine; every match is ranked, so that the rank is known even
// far down). A rank never flatters a tie: it is 1 plus the results ranked
// above the source plus the results tied with it, so a source tied with
// two others for first ranks third. Results tie at an equal score, or,
// re-ranked, both verified at equal inliers and score (re-ranking keeps
// the learner's order there, spatial.CompareReranked); a source that does
// not match the copy at all ranks last of the run. A source that cannot
// be read or decoded, or a copy the run cannot describe (no keypoints),
// is a miss at the last rank, and its reason is printed; nothing is
// skipped.
//
// Progress goes to stderr every few seconds; --out writes the table and
// every copy's ranks as JSON. Errors end in one line "nearcopies: <cause>"
// (exit status 1; 2 for a bad command line).
package main
