// Package store holds the spine.Store implementations, one package per
// database:
//
//	store/postgres  pgx v5; many servers and workers on many machines;
//	                FOR UPDATE SKIP LOCKED claims, LISTEN/NOTIFY wake-ups
//	store/sqlite    modernc.org/sqlite; one process; one writer connection,
//	                BEGIN IMMEDIATE, WAL, in-process wake-ups
//	store/migrate   the embedded, numbered migration loader both use
//
// Open picks one by URL.
package store
