// Package server is the HTTP API of windforce (DESIGN §4): the process that
// users, the CLI, the console and other systems talk to.
//
//	request ──▶ ServeMux route ──▶ authenticate (API token, bootstrap admin
//	            token or WF_TOKEN; deny by default) ──▶ scope check
//	        ──▶ handler(r) (value, error) ──▶ one wrapper: JSON body, or the
//	            error body {"error":{"code","message","details"}} with the
//	            status its typed error maps to
//
// Every trigger handled here (api, cli, child, webhook, requeue) goes
// through the one enqueue path, catalog.Store.EnqueueAction, by way of a
// catalog.Enqueuer, which counts each accepted enqueue (the console uses
// the same one). Each route names its auth.Action, and its scope is
// auth.Need of it, the table the console's pages use too. Requests are refused before
// any work when they can be: the size limit is checked before the body is
// read whole (413), bad JSON or encoding (NUL, invalid UTF-8) gives 400,
// and a refused request writes no row.
//
// Handlers return (value, error); the wrapper in respond.go is the only
// place that writes a response, so status codes and the error body stay
// uniform across routes.
package server
