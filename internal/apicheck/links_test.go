package apicheck

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches a Markdown link or image target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks checks that every relative link of the module's Markdown
// files (outside code blocks) names a file or directory that exists, and
// that a link's #anchor into a Markdown file names one of its headings.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md", "BENCHMARKS.md", "CHANGELOG.md"}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*", "*.md"))
	for _, f := range append(docs, more...) {
		rel, _ := filepath.Rel(root, f)
		files = append(files, rel)
	}
	checked := 0
	for _, f := range files {
		links, err := relativeLinks(filepath.Join(root, f))
		if err != nil {
			t.Error(err)
			continue
		}
		for _, l := range links {
			checked++
			target, anchor, _ := strings.Cut(l, "#")
			path := filepath.Join(root, filepath.Dir(f), target)
			if target == "" {
				path = filepath.Join(root, f)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %q: %s does not exist", f, l, target)
				continue
			}
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			anchors, err := headingAnchors(path)
			if err != nil {
				t.Error(err)
				continue
			}
			if !anchors[anchor] {
				t.Errorf("%s: link %q: no heading of %s has the anchor #%s", f, l, target, anchor)
			}
		}
	}
	if checked == 0 {
		t.Error("no relative links found: the scan is broken")
	}
}

// relativeLinks returns the link targets of a Markdown file outside fenced
// code blocks, leaving out absolute URLs.
func relativeLinks(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var links []string
	fence := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			l := m[1]
			if strings.Contains(l, "://") || strings.HasPrefix(l, "mailto:") {
				continue
			}
			links = append(links, l)
		}
	}
	return links, sc.Err()
}

// headingAnchors returns the anchors GitHub gives a Markdown file's
// headings: lower case, spaces to hyphens, other punctuation dropped.
func headingAnchors(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	fence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors, nil
}
