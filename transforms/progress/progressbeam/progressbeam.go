// Package progressbeam logs the progress of a job's stages (package
// progress) through Beam's log, so that the lines reach a cluster's
// worker logs.
package progressbeam

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/transforms/progress"
)

// Log counts u in this process's progress (progress.Default) and logs
// the lines it deserves.
func Log(ctx context.Context, u progress.Unit) {
	for _, line := range progress.Default.Done(u, time.Now()) {
		log.Infof(ctx, "progress: %s", line)
	}
}
