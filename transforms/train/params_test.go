package train

import (
	"math"
	"testing"
)

// TestParams checks the defaults a learner trains with: λ scaled to the
// vocabulary from DefaultParamsVocabulary's, not for a learner of global
// features (vocab 0), and a given value kept as it is.
func TestParams(t *testing.T) {
	def := DefaultParams["solis-ada"]
	p := Params("solis-ada", 10*DefaultParamsVocabulary, nil)
	if math.Abs(p["lambda"]-def["lambda"]/10) > 1e-20 || p["eta"] != def["eta"] {
		t.Errorf("at 10× the vocabulary: %v, want λ %v / 10 and η %v", p, def["lambda"], def["eta"])
	}
	if p := Params("solis-ada", 0, nil); p["lambda"] != def["lambda"] {
		t.Errorf("without a vocabulary: λ %v, want %v", p["lambda"], def["lambda"])
	}
	if p := Params("solis-ada", 10*DefaultParamsVocabulary, map[string]float64{"lambda": 1e-3, "nonneg": 1}); p["lambda"] != 1e-3 || p["nonneg"] != 1 {
		t.Errorf("given λ and nonneg: %v", p)
	}
	p["eta"] = -1
	if DefaultParams["solis-ada"]["eta"] != def["eta"] {
		t.Errorf("Params shares its map with DefaultParams")
	}
}
