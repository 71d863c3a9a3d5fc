// Package source syncs git sources into the object cache and the catalog
// (DESIGN §3), and deploys files to a source's branch.
//
// Every sync of commit C runs in this fixed order, and stops at the first
// failure, leaving the catalog as it was and recording the error on the
// source:
//
//	lock the source (in-process mutex + catalog.Store.LockSource)
//	 1. fetch      git ls-remote, then a shallow fetch of the branch head C
//	               (git archive of C gives the tree)
//	 2. validate   windforce.yaml, the schema files it names, paths, symlinks
//	 3. cache      object cache Put: every file, then the marker LAST
//	               (a no-op when C is already complete)
//	 4. catalog    ApplySync: apps and actions of the source at C, one transaction
//
// Triggers: Syncer.Sync (API, CLI, console), Syncer.Hook (a push hook),
// Poller (every WINDFORCE_SYNC_INTERVAL). Deploy commits files to the
// branch, pushes, then syncs: the catalog changes only through sync.
//
// git is the real binary: it speaks every transport and credential setup
// an operator already has (credential helpers, ssh agent, known_hosts), and
// credentials stay in the server's environment, never in the database.
package source
