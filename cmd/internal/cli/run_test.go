package cli

import (
	"testing"

	"github.com/bowline/bowline/infra/prismretry"
)

func TestRetryRunner(t *testing.T) {
	for _, tc := range []struct {
		r    Runner
		want string
	}{
		{Runner{}, prismretry.Runner},
		{Runner{Name: "prism"}, prismretry.Runner},
		{Runner{Name: "PrismRunner", EnvironmentType: "LOOPBACK"}, prismretry.Runner},
		{Runner{Name: "prism", EnvironmentType: "PROCESS"}, ""},
		{Runner{Name: "prism", Endpoint: "localhost:8073", EnvironmentType: "LOOPBACK"}, ""},
		{Runner{Name: "direct"}, ""},
		{Runner{Name: "dataflow"}, ""},
		{Runner{Name: "flink", Endpoint: "localhost:8099"}, ""},
	} {
		if got := tc.r.retryRunner(); got != tc.want {
			t.Errorf("%+v: retry runner %q, want %q", tc.r, got, tc.want)
		}
	}
}
