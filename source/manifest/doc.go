// Package manifest reads and validates windforce.yaml, the file at the root
// of a git source that lists its apps and actions (DESIGN §3), together
// with the tree it describes.
//
//	tree (files of commit C)
//	  └─ CheckTree: clean paths, no symbolic link leading outside the tree
//	       (followed through the tree's other links, as the kernel would)
//	  └─ windforce.yaml ─▶ YAML (unknown fields refused)
//	       └─ per app: key, entrypoint exists, runtime known, timeout, tag, retry,
//	            limits, env (literals, {secret: NAME}), warm (bun/node/python)
//	            └─ per action: key, schema files exist and are JSON Schema
//	                           (≤ 1 MiB), the files they $ref bundled in,
//	                           timeout, tag, retry, limits overrides, env
//	                           (merged over the app's), warm (replaces it)
//	  ─▶ []catalog.App, ready for the catalog once the tree is in the cache
//
// Every problem found is reported, each naming its file and field, as one
// *Error (errors.Is(err, ErrInvalid)).
package manifest
