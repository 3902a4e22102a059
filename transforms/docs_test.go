package transforms_test

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The README's limits (issue 36): a newcomer reads it whole.
const (
	readmeMaxLines = 200
	readmeMaxWidth = 120
)

// TestDocuments keeps README.md and docs/ honest: every relative link in
// them resolves to a file or directory of the repository (and its anchor,
// if any, to a heading or an <a id> of the document it names), the README
// stays within its length and width, and the README's quick start — its
// first code block — is the smoke step .ci/run runs, command for command.
func TestDocuments(t *testing.T) {
	root := repoRoot(t)
	docs := []string{filepath.Join(root, "README.md")}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, more...)
	for _, want := range []string{"operations.md", "results.md"} {
		if !slices.Contains(docs, filepath.Join(root, "docs", want)) {
			t.Errorf("docs/%s is missing", want)
		}
	}

	t.Run("links", func(t *testing.T) {
		for _, doc := range docs {
			for _, problem := range brokenLinks(t, root, doc) {
				t.Errorf("%s", problem)
			}
		}
	})
	t.Run("readme shape", func(t *testing.T) {
		for _, problem := range readmeShape(read(t, filepath.Join(root, "README.md"))) {
			t.Errorf("README.md: %s", problem)
		}
	})
	t.Run("quick start is CI's smoke step", func(t *testing.T) {
		readme := read(t, filepath.Join(root, "README.md"))
		ci := read(t, filepath.Join(root, ".ci", "run"))
		if err := quickStartIsSmokeStep(readme, ci); err != nil {
			t.Error(err)
		}
	})
}

// TestDocumentChecksFail checks that each check of TestDocuments finds
// what it is there to find, on documents made to fail it.
func TestDocumentChecksFail(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.md")
	text := "# Title\n\n## A `code` heading: here\n\n" +
		"[ok](#title) [ok](#a-code-heading-here) [gone](missing.md) [bad anchor](#nowhere)\n" +
		"`[not a link](missing-too.md)` [web](https://example.com/x.md)\n\n" +
		"```\n[inside code](missing-three.md)\n```\n"
	if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got := brokenLinks(t, dir, doc)
	if len(got) != 2 || !strings.Contains(got[0], "missing.md") || !strings.Contains(got[1], "#nowhere") {
		t.Errorf("broken links = %q, want missing.md and #nowhere only", got)
	}
	if got := brokenLinks(t, root, doc); len(got) == 0 {
		t.Errorf("a document outside the repository: no broken link found")
	}

	long := "# x\n" + strings.Repeat("a", readmeMaxWidth+1) + "\n" +
		"```\n" + strings.Repeat("b", readmeMaxWidth+5) + "\n```\n" +
		"| " + strings.Repeat("c", readmeMaxWidth) + " |\n"
	if got := readmeShape(long); len(got) != 1 || !strings.Contains(got[0], "line 2") {
		t.Errorf("width problems = %q, want line 2's only", got)
	}
	if got := readmeShape(strings.Repeat("x\n", readmeMaxLines+1)); len(got) != 1 {
		t.Errorf("length problems = %q, want one", got)
	}

	readme := "# x\n\n```sh\ngo run ./cmd/a --x 1\ngo test ./...\n```\n"
	for _, c := range []struct {
		ci   string
		pass bool
	}{
		{"set -e\n# smoke\ngo run ./cmd/a --x 1\ngo test ./...\n", true},
		{"go run ./cmd/a --x 1\n\n# the tests\ngo test ./...\n", true},
		{"go run ./cmd/a --x 2\ngo test ./...\n", false},
		{"go test ./...\ngo run ./cmd/a --x 1\n", false},
		{"go run ./cmd/a --x 1\ngo vet ./...\ngo test ./...\n", false},
		{"# go run ./cmd/a --x 1\ngo test ./...\n", false},
	} {
		if err := quickStartIsSmokeStep(readme, c.ci); (err == nil) != c.pass {
			t.Errorf("CI script %q: err = %v, want pass %v", c.ci, err, c.pass)
		}
	}
	if err := quickStartIsSmokeStep("# x\n\n```sh\ngo test ./...\n```\n", "go test ./...\n"); err == nil {
		t.Errorf("a quick start of one command passed, want an error")
	}
}

// repoRoot is the module's root, the parent of this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod in %s: %v", root, err)
	}
	return root
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose returns the lines of a Markdown document outside fenced code
// blocks, by line number (from 1), with inline code spans blanked.
func prose(text string) map[int]string {
	out := map[int]string{}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		out[i+1] = codeSpan.ReplaceAllString(line, "``")
	}
	return out
}

// brokenLinks lists the relative links of the document at path (outside
// code) that name no file or directory under root, or an anchor that is
// no heading or <a id> of the Markdown document they name.
func brokenLinks(t *testing.T, root, path string) []string {
	t.Helper()
	text := read(t, path)
	rel, _ := filepath.Rel(root, path)
	lines := prose(text)
	numbers := make([]int, 0, len(lines))
	for n := range lines {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	var problems []string
	for _, n := range numbers {
		line := lines[n]
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if scheme.MatchString(target) {
				continue // a web address or mailto: not the repository's
			}
			if why := checkLink(t, root, path, target); why != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: link %s: %s", rel, n, target, why))
			}
		}
	}
	return problems
}

// checkLink says what is wrong with a relative link from the document at
// doc, or "".
func checkLink(t *testing.T, root, doc, target string) string {
	file, anchor, _ := strings.Cut(target, "#")
	file, _, _ = strings.Cut(file, "?")
	file, err := url.PathUnescape(file)
	if err != nil {
		return err.Error()
	}
	dest := doc
	if file != "" {
		if strings.HasPrefix(file, "/") {
			dest = filepath.Join(root, file) // GitHub: from the repository's root
		} else {
			dest = filepath.Join(filepath.Dir(doc), file)
		}
		inside, err := filepath.Rel(root, dest)
		if err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
			return "outside the repository"
		}
		if _, err := os.Stat(dest); err != nil {
			return "no such file or directory"
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	if !slices.Contains(anchors(read(t, dest)), anchor) {
		return fmt.Sprintf("no heading or <a id> %q in %s", anchor, filepath.Base(dest))
	}
	return ""
}

// anchors returns the anchors of a Markdown document as GitHub makes them:
// each heading's slug (lower case; letters, digits, '-' and '_' kept,
// spaces made '-', the rest dropped; a repeated slug numbered -1, -2, …)
// and every <a id="…">.
func anchors(text string) []string {
	var out []string
	seen := map[string]int{}
	lines := prose(text)
	raw := strings.Split(text, "\n")
	for i, line := range raw {
		if _, ok := lines[i+1]; !ok {
			continue // inside a code block
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
		trimmed := strings.TrimLeft(line, " ")
		heading := strings.TrimLeft(trimmed, "#")
		if len(trimmed)-len(heading) == 0 || len(trimmed)-len(heading) > 6 || !strings.HasPrefix(heading, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		slug := b.String()
		if k := seen[slug]; k > 0 {
			out = append(out, fmt.Sprintf("%s-%d", slug, k))
		} else {
			out = append(out, slug)
		}
		seen[slug]++
	}
	return out
}

// readmeShape lists where the README exceeds its limits: more than
// readmeMaxLines lines, or a line of prose (outside code blocks and
// tables) wider than readmeMaxWidth characters.
func readmeShape(text string) []string {
	var problems []string
	if n := strings.Count(text, "\n"); n > readmeMaxLines {
		problems = append(problems, fmt.Sprintf("%d lines, the limit is %d", n, readmeMaxLines))
	}
	fence := false
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fence = !fence
		case fence, strings.HasPrefix(trimmed, "|"):
		case utf8.RuneCountInString(line) > readmeMaxWidth:
			problems = append(problems, fmt.Sprintf("line %d is %d characters wide, the limit is %d outside code and tables",
				i+1, utf8.RuneCountInString(line), readmeMaxWidth))
		}
	}
	return problems
}

// quickStartIsSmokeStep checks that the README's first code block holds
// exactly two commands and that the CI script runs them one after the
// other, as commands of its own (comments and blank lines aside).
func quickStartIsSmokeStep(readme, ci string) error {
	quick, err := firstCodeBlock(readme)
	if err != nil {
		return err
	}
	if len(quick) != 2 {
		return fmt.Errorf("the README's first code block holds %d commands %q, want the quick start's two", len(quick), quick)
	}
	steps := commands(ci)
	for i := 0; i+1 < len(steps); i++ {
		if steps[i] == quick[0] && steps[i+1] == quick[1] {
			return nil
		}
	}
	return fmt.Errorf(".ci/run does not run the README's quick start %q as consecutive commands: its commands are %q", quick, steps)
}

// firstCodeBlock returns the commands of the first fenced code block.
func firstCodeBlock(text string) ([]string, error) {
	var block strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if in {
				return commands(block.String()), nil
			}
			in = true
			continue
		}
		if in {
			block.WriteString(line + "\n")
		}
	}
	return nil, fmt.Errorf("no complete fenced code block")
}

// commands returns a shell text's command lines, trimmed, without blank
// lines and comment lines.
func commands(text string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}
