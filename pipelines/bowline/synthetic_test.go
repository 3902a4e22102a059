package bowline

import (
	"path/filepath"
	"testing"

	"github.com/bowline/bowline/learners"
)

// TestSyntheticCorpus runs the real job on a small synthetic corpus (only
// decoding and SIFT are replaced): every image is described, and the
// labels are learnable — the learned similarity beats TF-IDF clearly.
func TestSyntheticCorpus(t *testing.T) {
	c := testConfig("synthetic:300?labels=6&descriptors=100", filepath.Join(t.TempDir(), "out"))
	c.Vocab.K = 1000 // fewer words merge the labels' prototypes with the clutter
	r := run(t, c)
	if r.Counts.Images != 300 || r.Counts.Described != 300 || r.Counts.DeadLetters != 0 {
		t.Errorf("counts = %+v, want 300 images described", r.Counts)
	}
	base, _ := r.Method(string(learners.BaselineTFIDF))
	ada, ok := r.Method("solis-ada")
	t.Logf("mAP: tfidf %.4f, solis-ada %.4f", base.MAP, ada.MAP)
	if !ok || ada.Queries != r.Split.QueryImages || ada.MAP < base.MAP+0.05 || !ada.Significant {
		t.Errorf("solis-ada %+v against tfidf %+v: want at least 0.05 better on every held-out image, significantly", ada, base)
	}
	c.Describe = c.Describe.WithGlobal()
	if err := c.Validate(); err == nil {
		t.Error("global features of a synthetic corpus were accepted")
	}
}
