// Package deploy holds Portico's deployment assets and their checks: the
// container image (Dockerfile, build.sh), a compose file running the four
// processes, Kubernetes manifests (k8s/, a separate Go module so
// kustomize and the Kubernetes API types stay out of the product's
// go.mod), and under docs/ the operator's page and the API consumers'
// onboarding page.
//
// The package has no code of its own. Its tests are the proof that the
// assets match the product: the binary builds the way the image builds it
// (static, trimmed, with the commit `portico version` prints), the
// Dockerfile runs it as a non-root user on the contract's ports, compose
// wires the processes to each other by service name, and the operator's
// config reference and the onboarding page's error codes are generated
// from gateway/config.Config and gateway/problem (go test ./deploy -update
// rewrites them).
package deploy
