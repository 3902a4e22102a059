package bowline

import (
	"errors"
	"testing"

	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/train"
)

// TestLearningValidateBounds: each of Learning's own settings out of its
// bounds is refused with a setting.Error naming it, which the command line
// reports as its flag's error.
func TestLearningValidateBounds(t *testing.T) {
	if err := DefaultLearning().Validate(train.DefaultParamsVocabulary, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		set  func(*Learning)
	}{
		{"bowline.GroupImages", func(l *Learning) { l.GroupImages = 0 }},
		{"bowline.GroupPostings", func(l *Learning) { l.GroupPostings = -1 }},
		{"bowline.GroupLoads", func(l *Learning) { l.GroupLoads = -1 }},
		{"evaluate.QueryFraction", func(l *Learning) { l.Eval.QueryFraction = 1 }},
		{"tune.Share", func(l *Learning) { l.Tune.Tune, l.Tune.Share = true, 0 }},
		{"tune.TargetSparsity", func(l *Learning) { l.Tune.TargetSparsity = 1 }},
		{"train.Shards", func(l *Learning) { l.Shards = 0 }},
		{"train.Rounds", func(l *Learning) { l.Rounds = 0 }},
	} {
		l := DefaultLearning()
		c.set(&l)
		var e *setting.Error
		if err := l.Validate(train.DefaultParamsVocabulary, false); !errors.As(err, &e) || e.Name() != c.name {
			t.Errorf("%s: %v, want a setting.Error naming it", c.name, err)
		}
	}
}
