// Package stale keeps the last good answers of GET routes so that the
// edge can answer one of them when the upstream fails (RFC 5861's
// stale-if-error): a Copy is an answer's body, its Content-Type and when
// it was stored, filed under a Key the edge derives from everything the
// answer's authorisation depended on.
//
// LRU holds copies in memory, bounded in bytes (key, body and header
// counted); the least recently used copy goes first. Shared holds them in
// Redis so that every edge replica can answer a copy any of them kept:
// Offer writes in the background (a full queue drops the write) and Get
// reads with a short timeout; after a failed call Redis is skipped for a
// second, so a dead Redis costs a request at most one timeout and never
// fails it. Accept reads what a client's Cache-Control allows (RFC 9111
// section 5.2.1: no-cache and max-stale).
//
// LRU and Shared are safe for concurrent use.
package stale
