package trainbeam

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/infra/prismretry"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }
