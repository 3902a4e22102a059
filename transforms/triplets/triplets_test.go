package triplets

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func items(labels, per int) []Item {
	var out []Item
	for l := 0; l < labels; l++ {
		for i := 0; i < per; i++ {
			out = append(out, Item{ID: fmt.Sprintf("l%d-i%d", l, i), Label: fmt.Sprintf("L%d", l)})
		}
	}
	return out
}

func TestSampleRespectsLabels(t *testing.T) {
	in := items(4, 5)
	in = append(in, Item{ID: "lonely", Label: "solo"}, Item{ID: "unlabelled"})
	label := map[string]string{}
	for _, it := range in {
		label[it.ID] = it.Label
	}
	ts, err := Sample(in, Options{PerQuery: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4*5*3 {
		t.Fatalf("got %d triplets, want %d (the lonely and unlabelled images yield none)", len(ts), 4*5*3)
	}
	for _, tr := range ts {
		if tr.Query == tr.Positive {
			t.Errorf("positive is the query: %+v", tr)
		}
		if label[tr.Query] != label[tr.Positive] || label[tr.Query] == label[tr.Negative] || label[tr.Negative] == "" {
			t.Errorf("bad triplet %+v (labels %q %q %q)", tr, label[tr.Query], label[tr.Positive], label[tr.Negative])
		}
	}
	for i := 1; i < len(ts); i++ {
		if ts[i-1].Seq > ts[i].Seq {
			t.Fatalf("not sorted by Seq at %d", i)
		}
	}
}

func TestSampleIsDeterministicAndOrderFree(t *testing.T) {
	in := items(3, 6)
	a, _ := Sample(in, Options{PerQuery: 4, Seed: 1})
	shuffled := append([]Item(nil), in...)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b, _ := Sample(shuffled, Options{PerQuery: 4, Seed: 1})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("input order changed the triplets")
	}
	c, _ := Sample(in, Options{PerQuery: 4, Seed: 2})
	if reflect.DeepEqual(a, c) {
		t.Fatal("another seed gave the same triplets")
	}
	// One query sampled alone equals its share of the whole sample.
	p := NewPool(in)
	one := p.ForQuery(nil, in[0], Options{PerQuery: 4, Seed: 1})
	n := 0
	for _, tr := range a {
		if tr.Query == in[0].ID {
			n++
		}
	}
	if len(one) != 4 || n != 4 {
		t.Fatalf("query alone gave %d, in the sample %d; want 4 and 4", len(one), n)
	}
}

func TestSingleLabelYieldsNothing(t *testing.T) {
	ts, err := Sample(items(1, 5), Options{PerQuery: 2, Seed: 1})
	if err != nil || len(ts) != 0 {
		t.Fatalf("got %d triplets, %v; want none: there is no negative", len(ts), err)
	}
	if _, err := Sample(nil, Options{}); err == nil {
		t.Fatal("PerQuery 0 accepted")
	}
}

func TestLearnable(t *testing.T) {
	for _, c := range []struct {
		name  string
		items []Item
		want  string // "" for learnable, else a part of the reason
	}{
		{"two labels", items(2, 2), ""},
		{"one label", items(1, 5), `all carry one label ("L0")`},
		{"singletons", items(4, 1), "none of the 4 labels has 2 or more images"},
		{"unlabelled", []Item{{ID: "a"}, {ID: "b"}}, "no labelled images"},
		{"a pair and a negative", append(items(1, 2), Item{ID: "n", Label: "other"}), ""},
	} {
		err := NewPool(c.items).Learnable()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want learnable", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want one saying %q", c.name, err, c.want)
		}
		// Learnable is exactly "Sample draws something".
		ts, _ := Sample(c.items, Options{PerQuery: 2, Seed: 1})
		if (len(ts) > 0) != (err == nil) {
			t.Errorf("%s: %d triplets drawn but Learnable says %v", c.name, len(ts), err)
		}
	}
}
