package main

// gen/ and shipping.binpb come from proto/ with the buf pinned in
// Portico's tools/go.mod (run in this directory):
//
//go:generate go tool -modfile=../../tools/go.mod buf generate
//go:generate go tool -modfile=../../tools/go.mod buf build --path proto/acme -o shipping.binpb
