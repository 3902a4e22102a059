package report

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/bowline/bowline/formats"
)

func TestSummariseDead(t *testing.T) {
	var dead []formats.DeadLetter
	for i := 30; i > 0; i-- {
		id := fmt.Sprintf("img%02d", i)
		dead = append(dead, formats.DeadLetter{ImageID: id, URI: "gs://b/" + id + ".jpg", Stage: "decode",
			Reason: fmt.Sprintf("decode gs://b/%s.jpg: unexpected EOF at byte %d", id, 100*i)})
	}
	dead = append(dead,
		formats.DeadLetter{Stage: "ingest", Reason: "labels line 9: duplicate image id \"a2\"; kept line 4 (photos/2024/x2.jpg)"},
		formats.DeadLetter{Stage: "ingest", Reason: "labels line 7: duplicate image id \"a1\"; kept line 3 (photos/2024/x1.jpg)"},
		formats.DeadLetter{ImageID: "big", URI: "big.jpg", Stage: "decode", Reason: "big.jpg: 90000000 pixels, over the limit"})
	i := 0
	got := SummariseDead(func(d *formats.DeadLetter) bool {
		if i == len(dead) {
			return false
		}
		*d = dead[i]
		i++
		return true
	})
	// A kind shows one of its reasons whole (the first), not a pattern
	// with every digit replaced, which would mangle the path.
	wantKinds := []DeadKind{
		{Stage: "decode", Example: "decode gs://b/img01.jpg: unexpected EOF at byte 100", Count: 30},
		{Stage: "ingest", Example: "labels line 7: duplicate image id \"a1\"; kept line 3 (photos/2024/x1.jpg)", Count: 2},
		{Stage: "decode", Example: "big.jpg: 90000000 pixels, over the limit", Count: 1},
	}
	if got.Total != 33 || !reflect.DeepEqual(got.Kinds, wantKinds) {
		t.Errorf("total %d, kinds\n%+v\nwant 33,\n%+v", got.Total, got.Kinds, wantKinds)
	}
	// The two ingest letters have no id: they sort first, then big, img01….
	var ids []string
	for _, d := range got.First {
		ids = append(ids, d.ImageID)
	}
	want := []string{"", "", "big", "img01", "img02", "img03", "img04", "img05", "img06", "img07"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("first dead letters %q, want %q", ids, want)
	}
}
