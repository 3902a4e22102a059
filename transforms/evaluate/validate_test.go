package evaluate

import (
	"errors"
	"testing"

	"github.com/bowline/bowline/transforms/setting"
)

func TestOptionsValidate(t *testing.T) {
	if err := (Options{MaxQueries: 10, QueryFraction: 0.2, Rerank: 100, Expand: 5}).Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for name, o := range map[string]Options{
		"evaluate.QueryFraction": {QueryFraction: 1},
		"evaluate.MaxQueries":    {MaxQueries: -1},
		"evaluate.TrainQueries":  {TrainQueries: -1},
		"evaluate.Depth":         {Depth: -1},
		"evaluate.ShardQueries":  {ShardQueries: -1},
		"evaluate.ChunkImages":   {ChunkImages: -1},
		"evaluate.ChunkPostings": {ChunkPostings: -1},
		"evaluate.ShardHits":     {ShardHits: -1},
		"evaluate.Rerank":        {Rerank: -1},
		"evaluate.Expand":        {Expand: -1},
	} {
		var e *setting.Error
		if err := o.Validate(); !errors.As(err, &e) || e.Name() != name || e.Must == "" {
			t.Errorf("%+v: %v, want a setting error of %s", o, err, name)
		}
	}
}
