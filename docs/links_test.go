package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package.
const root = ".."

// pages are the Markdown files whose links are checked, relative to root.
func pages(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"README.md", "docs/*.md", "deploy/docs/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 3 {
		t.Fatalf("found %d pages under %s, want README.md, docs/ and deploy/docs/", len(out), root)
	}
	return out
}

// link is one [text](target) outside code, with the line it is on.
type link struct {
	target string
	line   int
}

var (
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
	headingRE    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	emphasisRE   = regexp.MustCompile("[`*]")
)

// scan reads a Markdown page's links and the anchors its headings make.
// Fenced code blocks and inline code are not Markdown, so links in them are
// not links.
func scan(text string) (links []link, anchors map[string]bool) {
	anchors = map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			a := slug(m[2])
			if n := seen[a]; n > 0 {
				anchors[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range linkRE.FindAllStringSubmatch(inlineCodeRE.ReplaceAllString(line, ""), -1) {
			links = append(links, link{target: m[1], line: i + 1})
		}
	}
	return links, anchors
}

// slug is the anchor GitHub gives a heading: its text without Markdown
// emphasis, lower case, every character but letters, digits, spaces,
// hyphens and underscores dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(emphasisRE.ReplaceAllString(heading, "")) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// external links are not checked: a test must not depend on the network.
func external(target string) bool {
	return strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:")
}

// checkLinks returns one line per link in files that does not resolve: a
// file or directory that does not exist, or an #anchor no heading of the
// target page makes.
func checkLinks(files []string) ([]string, error) {
	anchorsOf := map[string]map[string]bool{}
	linksOf := map[string][]link{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		linksOf[f], anchorsOf[f] = scan(string(b))
	}
	var broken []string
	for _, f := range files {
		for _, l := range linksOf[f] {
			if err := resolve(f, l.target, anchorsOf); err != nil {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %v", f, l.line, l.target, err))
			}
		}
	}
	return broken, nil
}

// resolve checks one link of the page from against the file system and,
// for an anchor, the headings of the page it names.
func resolve(from, target string, anchorsOf map[string]map[string]bool) error {
	if external(target) {
		return nil
	}
	path, anchor, _ := strings.Cut(target, "#")
	dest := from
	if path != "" {
		dest = filepath.Join(filepath.Dir(from), filepath.FromSlash(path))
		if _, err := os.Stat(dest); err != nil {
			return fmt.Errorf("no such file")
		}
	}
	if anchor == "" {
		return nil
	}
	anchors, ok := anchorsOf[dest]
	if !ok {
		if !strings.HasSuffix(dest, ".md") {
			return fmt.Errorf("an anchor into a file that is not Markdown")
		}
		b, err := os.ReadFile(dest)
		if err != nil {
			return err
		}
		_, anchors = scan(string(b))
		anchorsOf[dest] = anchors
	}
	if !anchors[anchor] {
		return fmt.Errorf("no heading makes the anchor #%s", anchor)
	}
	return nil
}

// TestLinks: every relative link and #anchor in the README and the
// reference pages resolves.
func TestLinks(t *testing.T) {
	broken, err := checkLinks(pages(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// TestLinksCatches: the check reports a missing file and a missing anchor,
// follows an anchor into another page, and leaves code and external links
// alone.
func TestLinksCatches(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := write("other.md", "# Other\n\n## Side by side (`make bench-edge`)\n\n## Dup\n\n## Dup\n")
	page := write("page.md", strings.Join([]string{
		"# Page",
		"## Running on PostgreSQL / a local cluster",
		"[ok](other.md) [ok](other.md#side-by-side-make-bench-edge) [ok](other.md#dup-1)",
		"[ok](#running-on-postgresql--a-local-cluster) [ok](https://example.com/x#y) [ok](.)",
		"[gone](missing.md)",
		"[bad anchor](other.md#nowhere)",
		"[bad local anchor](#nowhere)",
		"`[in code](missing.md)`",
		"```",
		"[in a block](missing.md)",
		"```",
	}, "\n"))
	broken, err := checkLinks([]string{page, other})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range broken {
		_, rest, _ := strings.Cut(b, ": ")
		got = append(got, rest)
	}
	want := []string{
		"missing.md: no such file",
		"other.md#nowhere: no heading makes the anchor #nowhere",
		"#nowhere: no heading makes the anchor #nowhere",
	}
	if !slices.Equal(got, want) {
		t.Errorf("broken links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEveryPageIsLinked: every page in docs/ is linked from the README, so
// a newcomer can reach it.
func TestEveryPageIsLinked(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	links, _ := scan(string(b))
	linked := map[string]bool{}
	for _, l := range links {
		path, _, _ := strings.Cut(l.target, "#")
		linked[filepath.Clean(path)] = true
	}
	m, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m {
		if !linked[filepath.Join("docs", p)] {
			t.Errorf("README.md does not link docs/%s", p)
		}
	}
}

// maxREADMELines bounds the README: the newcomer's path (what Portico is,
// the two commands, try it, where to go next). Reference material belongs
// in docs/.
const maxREADMELines = 200

// TestREADMEIsShort: the README stays within maxREADMELines.
func TestREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxREADMELines {
		t.Errorf("README.md has %d lines, at most %d: move reference material into docs/", n, maxREADMELines)
	}
}
