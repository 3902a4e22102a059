package report

import "fmt"

// countsLine is the table's first line: the run's counts, said so that
// they add up. The dead letters are of two kinds — images that were
// listed but not described, and rows or files of the input refused at
// ingest (a repeated id, no path; a HEIC, an image outside any label's
// folder), which are not among the images — and a run with both
// printed "30 images (7 dead letters, 24 described)".
func (r Report) countsLine() string {
	c := r.Counts
	if c.Images == 0 && c.Keypoints == 0 && c.DeadLetters == 0 && c.Described > 0 {
		// A retrain reads a finished run's bags of words: it lists and
		// describes no images, and "0 images, 3280 described" would
		// not add up.
		return fmt.Sprintf("%d bags of words of a finished run, %d words, %d triplets", c.Described, c.Vocabulary, c.Triplets)
	}
	var refused int64
	for _, k := range r.DeadLetters.Kinds {
		if k.Stage == "ingest" {
			refused += k.Count
		}
	}
	dead := fmt.Sprintf("%d dead letters", c.DeadLetters)
	switch {
	case refused == 1:
		dead += " (1 of them a row or file of the input refused at ingest, not listed as an image)"
	case refused > 1:
		dead += fmt.Sprintf(" (%d of them rows or files of the input refused at ingest, not listed as images)", refused)
	}
	return fmt.Sprintf("%d images, %d described, %s; %d keypoints, %d words, %d triplets",
		c.Images, c.Described, dead, c.Keypoints, c.Vocabulary, c.Triplets)
}
