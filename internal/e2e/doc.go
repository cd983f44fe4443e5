// Package e2e holds Portico's end-to-end tests: they build the real binary,
// start its processes on free ports (never fixed ones), drive them over real
// gRPC and HTTP, kill, pause and restart them, and always stop them when the
// test ends. It has no non-test code.
package e2e
