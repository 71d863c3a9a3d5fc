package manifest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/source/manifest"
)

// problemFiles runs CheckTree and returns the files it refused, by path,
// with their messages.
func problemFiles(t *testing.T, files []objectcache.File) map[string]string {
	t.Helper()
	err := manifest.CheckTree(files)
	if err == nil {
		return nil
	}
	var me *manifest.Error
	if !errors.As(err, &me) {
		t.Fatalf("CheckTree: %v is not a *manifest.Error", err)
	}
	got := map[string]string{}
	for _, p := range me.Problems {
		got[p.File] = p.Message
	}
	return got
}

// TestCheckTreeLinkChains: links that each point inside the tree on their
// own but lead outside once followed through the others, as the kernel
// follows them, are refused. Each of these trees passed the check that
// looked at one link's target alone.
func TestCheckTreeLinkChains(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files []objectcache.File
		// refused maps each link that must be refused to a part of its
		// message.
		refused map[string]string
	}{
		{"dot then up, from the issue", []objectcache.File{
			link("dot", "."),
			link("up1", "dot/.."),
			link("up2", "up1/.."),
		}, map[string]string{
			"up1": `points outside the repository (to "dot/..")`,
			"up2": "through the link up1",
		}},
		{"deeper chain", []objectcache.File{
			file("d1/d2/keep.txt", "x"),
			link("d1/d2/c", "../.."), // the root: fine on its own
			link("d1/d2/b", "c"),     // the root too
			link("d1/d2/a", "b/.."),  // above the root
		}, map[string]string{"d1/d2/a": `points outside the repository (to "b/..")`}},
		{"link to a directory link, then up", []objectcache.File{
			file("p/q/keep.txt", "x"),
			link("p/q/rootlink", "../.."),
			link("p/q/alias", "rootlink"),
			link("p/q/esc", "alias/../etc/passwd"),
		}, map[string]string{"p/q/esc": "points outside"}},
		{"out and back in by the tree's own name", []objectcache.File{
			file("tree/secret.txt", "x"),
			link("dot", "."),
			// Inside only if the tree were copied to a directory named
			// "tree": refused, whatever comes after the step outside.
			link("back", "dot/../tree/secret.txt"),
		}, map[string]string{"back": "points outside"}},
		{"through a missing directory", []objectcache.File{
			link("dot", "."),
			link("x", "nope/../dot/.."),
		}, map[string]string{"x": "points outside"}},
		{"loop of two", []objectcache.File{
			link("a", "b"),
			link("b", "a"),
		}, map[string]string{"a": "forms a loop", "b": "forms a loop"}},
		{"loop to itself through a directory", []objectcache.File{
			file("d/keep.txt", "x"),
			link("d/self", "../d/self/x"),
		}, map[string]string{"d/self": "forms a loop"}},
		{"chain of 41", chain(41), map[string]string{"l0": "chain of more than 40 links"}},
		{"chain into an absolute link", []objectcache.File{
			link("etc", "/etc"),
			link("pw", "etc/passwd"),
		}, map[string]string{
			"etc": `points outside the repository (to "/etc")`,
			"pw":  "through the link etc",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := problemFiles(t, c.files)
			for p, want := range c.refused {
				if !strings.Contains(got[p], want) {
					t.Errorf("%s: problem %q, want one containing %q (all: %v)", p, got[p], want, got)
				}
			}
			for p, msg := range got {
				if _, ok := c.refused[p]; !ok {
					t.Errorf("%s refused (%s) though it stays inside", p, msg)
				}
			}
		})
	}
}

// chain is l0 -> l1 -> … -> l{n-1} -> f, n links.
func chain(n int) []objectcache.File {
	files := []objectcache.File{file("f", "x")}
	for i := range n {
		next := "f"
		if i+1 < n {
			next = fmt.Sprintf("l%d", i+1)
		}
		files = append(files, link(fmt.Sprintf("l%d", i), next))
	}
	return files
}

// TestCheckTreeAbsoluteLinks: an absolute target is outside, whatever
// it names.
func TestCheckTreeAbsoluteLinks(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"/etc/passwd", "/", "//x", "/work/main"} {
		got := problemFiles(t, []objectcache.File{link("l", target)})
		if !strings.Contains(got["l"], "points outside the repository") {
			t.Errorf("link to %q: problems %v; want it refused", target, got)
		}
	}
}

// TestCheckTreeLinksInside: links that stay inside, however they get
// there, are accepted, and so is a chain of exactly 40.
func TestCheckTreeLinksInside(t *testing.T) {
	t.Parallel()
	trees := map[string][]objectcache.File{
		"sibling directory": {
			file("shared/lib/util.js", "x"),
			link("app/lib", "../shared/lib"),
			link("app/util.js", "lib/util.js"),
		},
		"dot slash":   {file("y", "x"), link("x", "./y")},
		"to the root": {link("dot", "."), link("d/up", ".."), link("d/e/upup", "../..")},
		"dangling":    {link("gone", "not/there")},
		"through a link and back down": {
			file("a/b/c.txt", "x"),
			link("top", "."),
			link("a/b/via", "../../top/a/b/c.txt"),
		},
		"chain of 40": chain(40),
	}
	for name, files := range trees {
		if got := problemFiles(t, files); got != nil {
			t.Errorf("%s: refused %v", name, got)
		}
	}
}

// TestCheckTreeShapes: a path under a link or a file, and a path twice,
// are refused: a copy of such a tree would write through the link, or
// write one of two different entries.
func TestCheckTreeShapes(t *testing.T) {
	t.Parallel()
	got := problemFiles(t, []objectcache.File{
		link("d", "sub"),
		file("sub/keep", "x"),
		file("d/x.txt", "x"),
		file("f", "x"),
		file("f/g", "x"),
		file("twice", "x"),
		link("twice", ".."),
	})
	want := map[string]string{"d/x.txt": "inside d", "f/g": "inside f", "twice": "appears twice"}
	for p, w := range want {
		if !strings.Contains(got[p], w) {
			t.Errorf("%s: problem %q, want %q", p, got[p], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems %v, want only %v", got, want)
	}
}

// TestLoadFollowsLinksLikeTheKernel: a manifest path through a directory
// link reads the file the kernel would open, not the one the path names
// lexically.
func TestLoadFollowsLinksLikeTheKernel(t *testing.T) {
	t.Parallel()
	y := strings.Replace(goodYAML, "entrypoint: src/main.ts", "entrypoint: app/lib/main.ts", 1)
	tree := append(goodTree(y),
		file("shared/lib/main.ts", "export async function main() {}"),
		link("app/lib", "../shared/lib"))
	if _, err := manifest.Load(tree); err != nil {
		t.Fatalf("load: %v", err)
	}
}
