// Package infra holds no Go code of its own (the runner the jobs and
// their tests run on is its subpackage prismretry) but the checks of the
// launch files beside it: the scripts are shellcheck-clean and strict, the Flex Template's
// parameters are flags the launched command defines, the schedules call
// what the template and the job server expect, every image tag agrees
// with the Beam and Go versions in go.mod, and none sets GOMEMLIMIT.
package infra

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// metadata is infra/dataflow/metadata.json, the Flex Template's.
type metadata struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  []struct {
		Name       string   `json:"name"`
		Label      string   `json:"label"`
		HelpText   string   `json:"helpText"`
		IsOptional bool     `json:"isOptional"`
		ParamType  string   `json:"paramType"`
		Regexes    []string `json:"regexes"`
	} `json:"parameters"`
}

func readMetadata(t *testing.T) metadata {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("dataflow", "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m metadata
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("metadata.json: %v", err)
	}
	return m
}

// scripts returns every shell script under infra/.
func scripts(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".sh") {
			out = append(out, p)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("found %d scripts: %v", len(out), err)
	}
	return out
}

func TestShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("shellcheck is not installed (apt-get install -y shellcheck)")
	}
	out, err := exec.Command("shellcheck", append([]string{"-x"}, scripts(t)...)...).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

// TestScriptsAreStrict: every script runs under bash with errexit,
// nounset and pipefail before its first command, and is executable.
func TestScriptsAreStrict(t *testing.T) {
	for _, p := range scripts(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if lines[0] != "#!/usr/bin/env bash" {
			t.Errorf("%s: first line %q, want #!/usr/bin/env bash", p, lines[0])
		}
		for _, l := range lines[1:] {
			if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if l != "set -euo pipefail" {
				t.Errorf("%s: first command %q, want set -euo pipefail", p, l)
			}
			break
		}
		if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable: %v", p, err)
		}
	}
}

// moduleDeps returns the directories of the module's own packages that
// pkg (a ./cmd/… pattern) builds from; ok is false when pkg does not
// exist.
func moduleDeps(t *testing.T, pkg string) (dirs []string, ok bool) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(pkg))); err != nil {
		return nil, false
	}
	depsMu.Lock()
	defer depsMu.Unlock()
	if d, ok := deps[pkg]; ok {
		return d, true
	}
	defer func() { deps[pkg] = dirs }()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Dir}}{{end}}", pkg)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, _ := strings.Cut(line, " ")
		if strings.HasPrefix(path, "github.com/bowline/bowline/") {
			dirs = append(dirs, dir)
		}
	}
	return dirs, true
}

// deps caches moduleDeps: go list takes seconds on a busy machine.
var (
	depsMu sync.Mutex
	deps   = map[string][]string{}
)

// flagMethods maps the flag package's defining functions (and
// *flag.FlagSet's methods) to the position of the flag's name.
var flagMethods = map[string]int{
	"String": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Bool": 0, "Float64": 0, "Duration": 0,
	"Func": 0, "BoolFunc": 0,
	"StringVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "BoolVar": 1,
	"Float64Var": 1, "DurationVar": 1, "Var": 1, "TextVar": 1,
}

// definedFlags returns the names of the flags the Go files in dirs define
// with a literal name, test files left out.
func definedFlags(t *testing.T, dirs []string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				i, ok := flagMethods[sel.Sel.Name]
				if !ok || len(call.Args) <= i+1 {
					return true
				}
				if lit, ok := call.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if name, err := strconv.Unquote(lit.Value); err == nil {
						names[name] = true
					}
				}
				return true
			})
		}
	}
	return names
}

// commandFlags returns the flags the command ./cmd/<name> defines,
// skipping the test while the command does not exist.
func commandFlags(t *testing.T, name string) map[string]bool {
	t.Helper()
	dirs, ok := moduleDeps(t, "./cmd/"+name)
	if !ok {
		t.Skipf("./cmd/%s does not exist yet", name)
	}
	return definedFlags(t, dirs)
}

// reindexFlags returns the flags ./cmd/reindex defines, skipping the test
// while the command does not exist.
func reindexFlags(t *testing.T) map[string]bool { return commandFlags(t, "reindex") }

// beamFlags returns the flags Beam's Dataflow runner and its options
// packages define: the runner flags a launch may pass beside the
// command's own.
func beamFlags(t *testing.T) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}",
		"github.com/apache/beam/sdks/v2/go/pkg/beam/runners",
		"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow",
		"github.com/apache/beam/sdks/v2/go/pkg/beam/options/gcpopts",
		"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list Beam's option packages: %v", err)
	}
	return definedFlags(t, strings.Fields(string(out)))
}

// templateBinary returns the command the Flex Template runs, from the
// Dockerfile's FLEX_TEMPLATE_GO_BINARY=/template/<name>.
func templateBinary(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ENV FLEX_TEMPLATE_GO_BINARY=/template/(\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Dockerfile sets no FLEX_TEMPLATE_GO_BINARY=/template/<command>")
	}
	return string(m[1])
}

// helpDefaults builds ./cmd/<name> and returns the defaults its --help
// prints, by flag: what a template's "(default …)" must agree with.
func helpDefaults(t *testing.T, name string) map[string]string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, "./cmd/"+name)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, out)
	}
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	// The help lists a flag as "  --name type" and its usage on lines
	// indented by six spaces, wrapped, ending in "(default …)" when it
	// has one.
	defaults := map[string]string{}
	flagLine := regexp.MustCompile(`^  --(\S+)`)
	stated := regexp.MustCompile(`\(default ([^)]*)\)$`)
	name, usage := "", ""
	done := func() {
		if name == "" {
			return
		}
		defaults[name] = ""
		if m := stated.FindStringSubmatch(usage); m != nil {
			defaults[name] = strings.Trim(m[1], `"`)
		}
		name, usage = "", ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		switch m := flagLine.FindStringSubmatch(line); {
		case m != nil:
			done()
			name = m[1]
		case name != "" && strings.HasPrefix(line, "      "):
			usage = strings.TrimSpace(usage + " " + strings.TrimSpace(line))
		default:
			done()
		}
	}
	done()
	if len(defaults) == 0 {
		t.Fatalf("%s --help lists no flags:\n%s", name, out)
	}
	return defaults
}

func TestDefinedFlags(t *testing.T) {
	dirs, ok := moduleDeps(t, "./cmd/bowline")
	if !ok {
		t.Fatal("./cmd/bowline does not exist")
	}
	got := definedFlags(t, dirs)
	for _, want := range []string{"input", "output", "vocab", "learners", "label_column", "seed", "verbose_errors"} {
		if !got[want] {
			t.Errorf("bowline's flag --%s not found in its source", want)
		}
	}
	if got["worker_binary"] || got["runner"] {
		t.Error("Beam's own flags were counted as the command's")
	}
}

func TestFlexTemplateMetadata(t *testing.T) {
	m := readMetadata(t)
	if m.Name == "" || len(m.Parameters) == 0 {
		t.Fatalf("metadata.json: name %q, %d parameters", m.Name, len(m.Parameters))
	}
	seen := map[string]bool{}
	for _, p := range m.Parameters {
		// gcloud refuses a parameter without any of these three.
		if p.Name == "" || p.Label == "" || p.HelpText == "" {
			t.Errorf("parameter %+v: name, label and helpText are required", p)
		}
		if seen[p.Name] {
			t.Errorf("parameter %s twice", p.Name)
		}
		seen[p.Name] = true
		for _, re := range p.Regexes {
			if _, err := regexp.Compile(re); err != nil {
				t.Errorf("parameter %s: regex %q: %v", p.Name, re, err)
			}
		}
		if (p.Name == "input" || p.Name == "output") && p.IsOptional {
			t.Errorf("parameter %s is optional; the command needs it", p.Name)
		}
		if p.Name == "input" || p.Name == "output" {
			// A template job runs on Dataflow: local paths are refused.
			re := regexp.MustCompile(p.Regexes[0])
			if !re.MatchString("gs://bucket/corpus/labels.csv") || re.MatchString("/data/labels.csv") {
				t.Errorf("parameter %s: regex %q does not ask for gs://", p.Name, p.Regexes[0])
			}
		}
	}
	if !seen["input"] || !seen["output"] {
		t.Errorf("parameters %v: input and output are required", seen)
	}
	bin := templateBinary(t)
	if bin != "bowline" {
		// reindex refuses --template_location, which the template
		// launcher passes: it must wait for its job to gate and publish.
		t.Errorf("the template runs %s; only bowline can run from a Flex Template", bin)
	}
	t.Run("flags of the template's command", func(t *testing.T) {
		flags := commandFlags(t, bin)
		for _, p := range m.Parameters {
			if !flags[p.Name] {
				t.Errorf("template parameter %s is no flag of ./cmd/%s: the launcher would fail on --%s", p.Name, bin, p.Name)
			}
		}
	})
	t.Run("stated defaults", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: builds the command")
		}
		defaults := helpDefaults(t, bin)
		stated := regexp.MustCompile(`\(default ([^)]*)\)`)
		for _, p := range m.Parameters {
			if d := stated.FindStringSubmatch(p.HelpText); d != nil && d[1] != defaults[p.Name] {
				t.Errorf("parameter %s states the default %q; %s's is %q", p.Name, d[1], bin, defaults[p.Name])
			}
		}
	})
}

// TestGcloudAcceptsTheTemplate: gcloud builds the template spec from
// metadata.json (--print-only: nothing is built or written).
func TestGcloudAcceptsTheTemplate(t *testing.T) {
	if _, err := exec.LookPath("gcloud"); err != nil || testing.Short() {
		t.Skip("gcloud is not installed, or -short")
	}
	cmd := exec.Command("dataflow/build-template.sh")
	cmd.Env = append(os.Environ(), "PROJECT=p", "REGION=europe-west1", "REPOSITORY=r", "TEMPLATE_BUCKET=b", "TAG=t", "PRINT_ONLY=1",
		"CLOUDSDK_CONFIG="+t.TempDir(), "CLOUDSDK_CORE_DISABLE_PROMPTS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build-template.sh: %v\n%s", err, out)
	}
	for _, want := range []string{`"image": "europe-west1-docker.pkg.dev/p/r/bowline-flex:t"`, `"name": "output"`, `"language": "GO"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the template spec lacks %s:\n%s", want, out)
		}
	}
}

// stubGcloud puts a gcloud on PATH that records its calls, one argument a
// line and "----" after each call, in the returned log, copies a
// --message-body-from-file to log+".body", and fails "scheduler jobs
// describe" unless describeOK.
func stubGcloud(t *testing.T, describeOK bool) (env []string, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	describe := "1"
	if describeOK {
		describe = "0"
	}
	stub := `#!/usr/bin/env bash
set -euo pipefail
{ printf '%s\n' "$@"; echo ----; } >>"$STUB_LOG"
prev=
for a in "$@"; do
  if [[ "$prev" == --message-body-from-file ]]; then cp "$a" "$STUB_LOG.body"; fi
  prev=$a
done
if [[ "$1 $2 $3" == "scheduler jobs describe" ]]; then exit ` + describe + `; fi
`
	if err := os.WriteFile(filepath.Join(dir, "gcloud"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "STUB_LOG="+log), log
}

// calls splits a stub's log into its calls' arguments.
func calls(t *testing.T, log string) [][]string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, c := range strings.Split(strings.TrimSuffix(string(b), "----\n"), "----\n") {
		out = append(out, strings.Split(strings.TrimSuffix(c, "\n"), "\n"))
	}
	return out
}

// arg returns the value after flag in args.
func arg(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestCloudScheduler: the scheduler job POSTs to Cloud Run's jobs:run, as
// an OAuth service account, a request whose argument override carries the
// night's flags — the job's (input, root, label column, vocabulary,
// learners, extra ones) and Dataflow's — every one a flag of reindex or of
// Beam; a second run updates the job instead of creating another; the
// Flex Template, which cannot gate or publish, is refused.
func TestCloudScheduler(t *testing.T) {
	base := []string{"PROJECT=proj", "REGION=europe-west1", "STAGING_BUCKET=stage", "INPUT=gs://img/labels.csv",
		"ROOT=gs://idx/bowline", "SCHEDULER_SA=sched@proj.iam.gserviceaccount.com",
		"LABEL_COLUMN=category", "VOCAB=10000", "LEARNERS=solis-ada,oasis-diag", "EXTRA_ARGS=--keep=7  --max_map_drop=0.02"}
	defined := reindexFlags(t)
	beam := beamFlags(t)
	for _, describeOK := range []bool{false, true} {
		env, log := stubGcloud(t, describeOK)
		cmd := exec.Command("schedule/cloud-scheduler.sh")
		cmd.Env = append(env, base...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cloud-scheduler.sh: %v\n%s", err, out)
		}
		cs := calls(t, log)
		if len(cs) != 2 || cs[0][2] != "describe" {
			t.Fatalf("gcloud calls %q: want describe, then create or update", cs)
		}
		verb, want := cs[1][2], "create"
		if describeOK {
			want = "update"
		}
		if verb != want || cs[1][3] != "http" || cs[1][4] != "bowline-nightly" {
			t.Errorf("existing job %v: gcloud %q, want scheduler jobs %s http bowline-nightly", describeOK, cs[1][:5], want)
		}
		args := cs[1]
		if got := arg(args, "--uri"); got != "https://run.googleapis.com/v2/projects/proj/locations/europe-west1/jobs/bowline-reindex:run" {
			t.Errorf("--uri %s", got)
		}
		if arg(args, "--http-method") != "POST" || arg(args, "--oauth-service-account-email") != "sched@proj.iam.gserviceaccount.com" ||
			arg(args, "--oauth-token-scope") != "https://www.googleapis.com/auth/cloud-platform" || arg(args, "--max-retry-attempts") != "0" {
			t.Errorf("not an authorised POST without retries: %q", args)
		}
		b, err := os.ReadFile(log + ".body")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Overrides struct {
				ContainerOverrides []struct {
					Args []string `json:"args"`
				} `json:"containerOverrides"`
			} `json:"overrides"`
		}
		if err := json.Unmarshal(b, &body); err != nil || len(body.Overrides.ContainerOverrides) != 1 {
			t.Fatalf("body: %v\n%s", err, b)
		}
		flags := map[string]string{}
		for _, a := range body.Overrides.ContainerOverrides[0].Args {
			name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !ok || !strings.HasPrefix(a, "--") {
				t.Errorf("argument %q: want --name=value", a)
			}
			if !defined[name] && !beam[name] {
				t.Errorf("--%s is no flag of ./cmd/reindex or of Beam's Dataflow runner", name)
			}
			flags[name] = value
		}
		for name, want := range map[string]string{"input": "gs://img/labels.csv", "root": "gs://idx/bowline", "label_column": "category",
			"vocab": "10000", "learners": "solis-ada,oasis-diag", "keep": "7", "max_map_drop": "0.02", "runner": "dataflow",
			"project": "proj", "temp_location": "gs://stage/temp", "staging_location": "gs://stage/staging",
			"service_account_email": "bowline-worker@proj.iam.gserviceaccount.com", "memory_limit": "10GiB"} {
			if flags[name] != want {
				t.Errorf("--%s=%q, want %q (args %v)", name, flags[name], want, flags)
			}
		}
	}
	for _, bad := range []struct{ env, want string }{
		{`INPUT=gs://img/"x".csv`, "holds a quote"},
		{"TARGET=flex", "cannot gate or publish"},
		{"EXTRA_ARGS=--keep 7", "is not --name=value"},
	} {
		env, _ := stubGcloud(t, false)
		cmd := exec.Command("schedule/cloud-scheduler.sh")
		cmd.Env = append(append(env, base...), bad.env)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), bad.want) {
			t.Errorf("%s: %v\n%s", bad.env, err, out)
		}
	}
}

// TestRunTemplate: run-template.sh launches the template with the
// required parameters and extra ones whose values may hold commas.
func TestRunTemplate(t *testing.T) {
	env, log := stubGcloud(t, false)
	cmd := exec.Command("dataflow/run-template.sh", "learners=solis-ada,oasis-diag", "vocab=10000")
	cmd.Env = append(env, "PROJECT=proj", "REGION=europe-west1", "TEMPLATE_BUCKET=tmpl", "INPUT=gs://img/labels.csv", "OUTPUT=gs://idx/runs/one", "JOB_NAME=night")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run-template.sh: %v\n%s", err, out)
	}
	cs := calls(t, log)
	if len(cs) != 1 || !slices.Equal(cs[0][:4], []string{"dataflow", "flex-template", "run", "night"}) {
		t.Fatalf("gcloud calls %q", cs)
	}
	args := cs[0]
	if arg(args, "--template-file-gcs-location") != "gs://tmpl/templates/bowline.json" || arg(args, "--temp-location") != "gs://tmpl/temp" {
		t.Errorf("template or temp location: %q", args)
	}
	var params []string
	for i, a := range args {
		if a == "--parameters" && i+1 < len(args) {
			params = append(params, args[i+1])
		}
	}
	want := []string{"^~^input=gs://img/labels.csv", "^~^output=gs://idx/runs/one", "^~^learners=solis-ada,oasis-diag", "^~^vocab=10000"}
	if !slices.Equal(params, want) {
		t.Errorf("--parameters %q, want %q", params, want)
	}
}

// beamVersion returns the Beam Go SDK's version in go.mod ("2.77.0") and
// the Go version ("1.26.8").
func versions(t *testing.T) (beam, goVersion string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/apache/beam/sdks/v2 v(\S+)`).FindSubmatch(b)
	g := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(b)
	if m == nil || g == nil {
		t.Fatal("go.mod names no Beam or Go version")
	}
	return string(m[1]), string(g[1])
}

// flinkJobServer matches Beam's Flink job server image, capturing the
// Flink and Beam versions.
var flinkJobServer = regexp.MustCompile(`^apache/beam_flink(\d+\.\d+)_job_server:(\S+)$`)

// TestFlinkCompose: the compose file's job server, Flink and Go SDK worker
// images agree with each other and with go.mod's Beam.
func TestFlinkCompose(t *testing.T) {
	beam, _ := versions(t)
	b, err := os.ReadFile(filepath.Join("flink", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string   `yaml:"image"`
			Command     any      `yaml:"command"`
			NetworkMode string   `yaml:"network_mode"`
			Volumes     []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	js, tm, pool := compose.Services["job-server"], compose.Services["taskmanager"], compose.Services["sdk-worker-pool"]
	m := flinkJobServer.FindStringSubmatch(js.Image)
	if m == nil || m[2] != beam {
		t.Fatalf("job server image %q: want apache/beam_flinkX.Y_job_server:%s", js.Image, beam)
	}
	if !strings.HasPrefix(tm.Image, "flink:"+m[1]+"-") && tm.Image != "flink:"+m[1] {
		t.Errorf("taskmanager image %s: the job server is for Flink %s", tm.Image, m[1])
	}
	if pool.Image != "apache/beam_go_sdk:"+beam || pool.NetworkMode != "service:taskmanager" {
		t.Errorf("worker pool %+v: want apache/beam_go_sdk:%s in the taskmanager's network", pool, beam)
	}
	for name, s := range map[string][]string{"job-server": js.Volumes, "taskmanager": tm.Volumes} {
		if !slices.Contains(s, "artifacts:/tmp/beam-artifact-staging") {
			t.Errorf("%s does not share the staged artifacts: %v", name, s)
		}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		cmd := exec.Command("docker-compose", "-f", filepath.Join("flink", "docker-compose.yml"), "config", "-q")
		cmd.Env = append(os.Environ(), "GOOGLE_APPLICATION_CREDENTIALS=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("docker-compose config: %v\n%s", err, out)
		}
	}
}

// TestFlinkCronJob: one night at a time, launched against the pod's own
// job server (of go.mod's Beam), on Flink, with flags the command defines.
func TestFlinkCronJob(t *testing.T) {
	beam, _ := versions(t)
	b, err := os.ReadFile(filepath.Join("schedule", "flink-cronjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Name          string   `yaml:"name"`
		Image         string   `yaml:"image"`
		Args          []string `yaml:"args"`
		RestartPolicy string   `yaml:"restartPolicy"`
	}
	var cj struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Schedule          string `yaml:"schedule"`
			ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
			JobTemplate       struct {
				Spec struct {
					Template struct {
						Spec struct {
							InitContainers []container `yaml:"initContainers"`
							Containers     []container `yaml:"containers"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			} `yaml:"jobTemplate"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &cj); err != nil {
		t.Fatal(err)
	}
	if cj.Kind != "CronJob" || cj.Spec.ConcurrencyPolicy != "Forbid" || len(strings.Fields(cj.Spec.Schedule)) != 5 {
		t.Errorf("kind %s, concurrencyPolicy %s, schedule %q", cj.Kind, cj.Spec.ConcurrencyPolicy, cj.Spec.Schedule)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Fatalf("pod: %d init containers, %d containers", len(pod.InitContainers), len(pod.Containers))
	}
	js, launcher := pod.InitContainers[0], pod.Containers[0]
	if m := flinkJobServer.FindStringSubmatch(js.Image); m == nil || m[2] != beam || js.RestartPolicy != "Always" {
		t.Errorf("job server sidecar %s (restartPolicy %q): want Beam %s's Flink job server as a native sidecar", js.Image, js.RestartPolicy, beam)
	}
	flags := map[string]string{}
	for _, a := range launcher.Args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			t.Errorf("argument %q: want --name=value", a)
		}
		flags[name] = value
	}
	if flags["runner"] != "flink" || flags["endpoint"] != "localhost:8099" || !slices.Contains([]string{"EXTERNAL", "PROCESS", "DOCKER"}, flags["environment_type"]) {
		t.Errorf("launch flags %v: want --runner=flink --endpoint=localhost:8099 and a worker environment", flags)
	}
	t.Run("flags of reindex", func(t *testing.T) {
		defined := reindexFlags(t)
		beamFlags := map[string]bool{"runner": true, "endpoint": true, "environment_type": true, "environment_config": true, "parallelism": true}
		for name := range flags {
			if !beamFlags[name] && !defined[name] {
				t.Errorf("--%s is no flag of ./cmd/reindex", name)
			}
		}
	})
}

// TestDockerfile: the images build the commands the launch files run,
// static, with go.mod's Go, and the launcher runs as a non-root user.
func TestDockerfile(t *testing.T) {
	_, goVersion := versions(t)
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	if !strings.Contains(df, "ARG GO_VERSION="+goVersion+"\n") {
		t.Errorf("the Dockerfile's GO_VERSION is not go.mod's go %s", goVersion)
	}
	stages := regexp.MustCompile(`(?m)^FROM \S+ AS (\S+)$`).FindAllStringSubmatch(df, -1)
	var names []string
	for _, s := range stages {
		names = append(names, s[1])
	}
	if !slices.Equal(names, []string{"build", "launcher", "flex-template"}) {
		t.Errorf("stages %v", names)
	}
	build := regexp.MustCompile(`(?m)CGO_ENABLED=0 GOOS=linux GOARCH=amd64 \\\n\s+go build -trimpath -o /out/ (.+)$`).FindStringSubmatch(df)
	if build == nil {
		t.Fatal("no static linux/amd64 go build -trimpath")
	}
	for _, pkg := range strings.Fields(build[1]) {
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(pkg))); err != nil {
			if pkg == "./cmd/reindex" {
				t.Logf("the Dockerfile builds %s, which does not exist yet", pkg)
				continue
			}
			t.Errorf("the Dockerfile builds %s: %v", pkg, err)
		}
	}
	launcher := df[strings.Index(df, "\nFROM gcr.io/distroless/"):strings.Index(df, " AS flex-template")]
	if !strings.Contains(launcher, "USER nonroot:nonroot") || !strings.Contains(launcher, "distroless/static") {
		t.Errorf("the launcher stage is not distroless/static as nonroot:\n%s", launcher)
	}
	if !strings.Contains(df, "ENV FLEX_TEMPLATE_GO_BINARY=/template/") {
		t.Error("the flex-template stage does not name the binary the template launches")
	}
	// The template's base image is one release, not whatever :latest is
	// when the template is rebuilt.
	base := regexp.MustCompile(`(?m)^ARG FLEX_TEMPLATE_BASE=(\S+)$`).FindStringSubmatch(df)
	if base == nil || !regexp.MustCompile(`:flex_templates_base_image_release_\d{8}_RC\d\d$|@sha256:[0-9a-f]{64}$`).MatchString(base[1]) {
		t.Errorf("the Flex Template base %v is not pinned to a release tag or digest", base)
	}
}

// TestNoGOMEMLIMIT: the workers' memory limit is set in one place, the
// launching command's --memory_limit, which a worker hook carries to
// every worker (README.md, "The workers' memory"): no image, container,
// schedule or template here sets GOMEMLIMIT, which the workers would
// override and the launcher would take in place of the flag's default.
func TestNoGOMEMLIMIT(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		checked++
		if strings.Contains(string(b), "GOMEMLIMIT") {
			t.Errorf("%s sets GOMEMLIMIT: set --memory_limit in the launching command's flags instead", p)
		}
		return nil
	})
	if err != nil || checked < 5 {
		t.Fatalf("checked %d files: %v", checked, err)
	}
}
