package cli

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/bowline/bowline/infra/prismretry"
)

// Run runs p on the runner Beam's flags name, as beamx.RunWithMetrics
// does, except that a job on in-process Prism runs through
// prismretry.Runner: Prism v2.77.0 can fail a sound job on a loaded
// machine (a progress request to a runner-executed stage), and a job that
// runs in this process can simply be run again.
func Run(ctx context.Context, r Runner, p *beam.Pipeline) (beam.PipelineResult, error) {
	if name := r.retryRunner(); name != "" {
		return beam.Run(ctx, name, p)
	}
	return beamx.RunWithMetrics(ctx, p)
}

// retryRunner is the runner Run uses in place of the flags' one, or ""
// for the flags' own: only in-process Prism is run again, since a job
// submitted elsewhere may outlive a failure this process sees.
func (r Runner) retryRunner() string {
	if r.runnerName() == "prism" && r.Endpoint == "" && r.Workers() == InProcess {
		return prismretry.Runner
	}
	return ""
}
