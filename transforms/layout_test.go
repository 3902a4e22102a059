// Package transforms_test checks the layout rule of the repository: the
// stages are pure Go packages, each beside its thin Beam wrapper, and
// nothing but the wrappers, the pipelines, the commands and Beam file I/O
// depends on Beam.
package transforms_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"
)

const (
	module = "github.com/bowline/bowline"
	beam   = "github.com/apache/beam/"
)

// mayUseBeam reports whether the package at the module-relative path rel
// may depend on Beam: job graphs, binaries, the Beam wrappers of the stages
// (named <stage>beam), the file I/O that goes through Beam's file systems
// and the runner the jobs and the tests run on (infra/prismretry).
func mayUseBeam(rel string) bool {
	switch {
	case strings.HasPrefix(rel, "pipelines/"), strings.HasPrefix(rel, "cmd/"):
		return true
	case rel == "formats/fileio", rel == "formats/parquetio", rel == "infra/prismretry":
		return true
	}
	return strings.HasSuffix(path.Base(rel), "beam")
}

type goPackage struct {
	ImportPath                string
	Deps                      []string
	TestImports, XTestImports []string
}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Deps,TestImports,XTestImports", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages: the check would prove little", len(pkgs))
	}
	return pkgs
}

// TestPurePackagesDoNotDependOnBeam fails when a pure package depends on
// Beam, directly or through another package of the module.
func TestPurePackagesDoNotDependOnBeam(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if mayUseBeam(rel) {
			continue
		}
		for _, d := range p.Deps {
			if strings.HasPrefix(d, beam) {
				t.Errorf("%s is a pure package but depends on Beam (%s)", rel, d)
				break
			}
		}
	}
}

// TestStageTestsDoNotImportPipelines fails when the tests of a stage,
// learner or format import a job graph: they test their own package, and
// what they run on (infra/prismretry) sits outside pipelines/.
func TestStageTestsDoNotImportPipelines(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		if !strings.HasPrefix(rel, "transforms/") && !strings.HasPrefix(rel, "learners/") && !strings.HasPrefix(rel, "formats/") {
			continue
		}
		for _, d := range append(p.TestImports, p.XTestImports...) {
			if strings.HasPrefix(d, module+"/pipelines/") {
				t.Errorf("the tests of %s import %s", rel, strings.TrimPrefix(d, module+"/"))
			}
		}
	}
}

// TestWrappersSitBesideTheirStage: every Beam wrapper under transforms/ is
// transforms/<stage>/<stage>beam, beside the pure package of its stage.
// Under transforms/internal/ a package named <name>beam is Beam plumbing
// the wrappers share (how a long step takes its values), with no stage.
func TestWrappersSitBesideTheirStage(t *testing.T) {
	paths := map[string]bool{}
	pkgs := listPackages(t)
	for _, p := range pkgs {
		paths[strings.TrimPrefix(p.ImportPath, module+"/")] = true
	}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		if !strings.HasPrefix(rel, "transforms/") || !strings.HasSuffix(rel, "beam") || strings.HasPrefix(rel, "transforms/internal/") {
			continue
		}
		stage := path.Dir(rel)
		if path.Base(rel) != path.Base(stage)+"beam" {
			t.Errorf("%s: a stage's wrapper is named <stage>beam, here %sbeam", rel, path.Base(stage))
		}
		if !paths[stage] {
			t.Errorf("%s has no pure package %s beside it", rel, stage)
		}
	}
}
