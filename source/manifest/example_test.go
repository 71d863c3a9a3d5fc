package manifest_test

import (
	"fmt"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/source/manifest"
)

// Load validates a commit's files and returns its apps; problems name the
// file and the field.
func ExampleLoad() {
	tree := []objectcache.File{
		{Path: "windforce.yaml", Data: []byte("apps:\n  hello:\n    entrypoint: main.py\n    runtime: python\n    actions:\n      run: {}\n")},
		{Path: "main.py", Data: []byte("def main(input, ctx):\n    return input\n")},
	}
	apps, err := manifest.Load(tree)
	fmt.Println(apps[0].Key, apps[0].Runtime, apps[0].Timeout, apps[0].Actions[0].Key, err)

	tree[0].Data = []byte("apps:\n  hello:\n    entrypoint: main.py\n    runtime: ruby\n    actions:\n      run: {}\n")
	_, err = manifest.Load(tree)
	fmt.Println(err)
	// Output:
	// hello python 15m0s run <nil>
	// invalid manifest: windforce.yaml: apps.hello.runtime: unknown runtime "ruby" (want one of bun, node, python, command)
}
