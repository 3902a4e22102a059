package cli

import (
	"flag"
	"strconv"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/train"
)

// The rules of the flags of the vocabulary and the learners, whose
// options live in packages that cmdline, which query and serve share,
// does not import. Each bound is the options' Validate's
// (cmdline.Option).
func init() {
	cmdline.AddRules(map[string]cmdline.Rule{
		"vocab":        vocabRule("kmeansbeam.K", func(o *kmeansbeam.Options, v int) { o.K = v }),
		"vocab_sample": vocabRule("kmeansbeam.Sample", func(o *kmeansbeam.Options, v int) { o.Sample = v }),
		"vocab_iter":   vocabRule("kmeans.MaxIter", func(o *kmeansbeam.Options, v int) { o.MaxIter = v }),
		"vocab_chunks": vocabRule("kmeansbeam.Chunks", func(o *kmeansbeam.Options, v int) { o.Chunks = v }),
		// Judged as AKM uses it, --akm given or not.
		"akm_checks": vocabRule("nn.ForestOptions.Checks", func(o *kmeansbeam.Options, v int) { o.Approx, o.Forest.Checks = true, v }),
		"max_drift": cmdline.Option("kmeans.Drift.Max", func(v float64, _ *flag.FlagSet) error {
			return kmeans.Drift{Max: v}.Validate()
		}),

		"train_shards":   learningRule("train.Shards", func(l *bowline.Learning, v int) { l.Shards = v }),
		"train_rounds":   learningRule("train.Rounds", func(l *bowline.Learning, v int) { l.Rounds = v }),
		"group_images":   learningRule("bowline.GroupImages", func(l *bowline.Learning, v int) { l.GroupImages = v }),
		"group_postings": learningRule("bowline.GroupPostings", func(l *bowline.Learning, v int) { l.GroupPostings = v }),
		"group_loads":    learningRule("bowline.GroupLoads", func(l *bowline.Learning, v int) { l.GroupLoads = v }),
		"query_fraction": learningRule("evaluate.QueryFraction", func(l *bowline.Learning, v float64) { l.Eval.QueryFraction = v }),
		// Judged as a batch learner and tuning use them, one named or not.
		"batch_images": learningRule("train.MaxImages", func(l *bowline.Learning, v int) {
			l.Learners, l.BatchImages = append(l.Learners, batchLearner), v
		}),
		"tune_fraction":   learningRule("tune.Share", func(l *bowline.Learning, v float64) { l.Tune.Tune, l.Tune.Share = true, v }),
		"target_sparsity": learningRule("tune.TargetSparsity", func(l *bowline.Learning, v float64) { l.Tune.Tune, l.Tune.TargetSparsity = true, v }),
	})
}

// batchLearner is a batch learner of global features, whose options
// judge --batch_images.
const batchLearner = "ssml"

// vocabRule is the rule of a flag of the vocabulary's options: set sets
// it on the job's defaults, with the vocabulary size and sample of the
// command line (the sample's bound is the size).
func vocabRule[V any](name string, set func(*kmeansbeam.Options, V)) cmdline.Rule {
	return cmdline.Option(name, func(v V, fs *flag.FlagSet) error {
		o := bowline.DefaultConfig().Vocab
		o.K, o.Sample = intFlag(fs, "vocab", o.K), intFlag(fs, "vocab_sample", o.Sample)
		set(&o, v)
		return o.Validate()
	})
}

// learningRule is the rule of a flag of the learners' settings: set sets
// it on the defaults, checked with the global features.
func learningRule[V any](name string, set func(*bowline.Learning, V)) cmdline.Rule {
	return cmdline.Option(name, func(v V, _ *flag.FlagSet) error {
		l := bowline.DefaultLearning()
		set(&l, v)
		return l.Validate(train.DefaultParamsVocabulary, true)
	})
}

// intFlag returns the value of fs's flag name, or def if fs has none.
func intFlag(fs *flag.FlagSet, name string, def int) int {
	if f := fs.Lookup(name); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil {
			return n
		}
	}
	return def
}
