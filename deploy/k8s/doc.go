// Package k8s holds Portico's Kubernetes manifests (a kustomize base and
// dev and prod overlays) and the test that renders and checks them.
//
// It is its own Go module so that kustomize and the Kubernetes API types,
// which only this test needs, stay out of the product's go.mod and
// dependency graph; a replace directive points it at the repository's
// gateway package, whose constants and config parser the checks use.
// `make test` runs it (make test-k8s). After the root go.mod changes,
// run `go mod tidy` here too, so this module's go.sum covers what the
// gateway package now needs.
package k8s
