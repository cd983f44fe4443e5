package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/portico-gateway/portico/internal/boundedfile"
)

// maxSecretFileBytes bounds a secret file.
const maxSecretFileBytes = 64 << 10

// A SecretRef names a secret in the config without holding it:
//
//	sha256:<64 hex digits>   the SHA-256 of an API key (API keys only)
//	env:NAME                 the value of environment variable NAME
//	file:/path               the file's content, trailing newlines cut
//	anything else            the secret itself, in plaintext (warns)
//
// env: and file: are read when the config loads (and on every reload);
// a missing variable or file is a config error. A Secret is one resolved.
type Secret struct {
	Value     []byte // the secret; nil for a hash
	Hash      [sha256.Size]byte
	Plaintext bool
}

// ResolveSecret reads ref; hashOK allows "sha256:".
func ResolveSecret(ref string, hashOK bool) (Secret, error) {
	kind, rest, _ := strings.Cut(ref, ":")
	var s Secret
	switch kind {
	case "sha256":
		if !hashOK {
			return s, errors.New("a hash cannot sign: use env: or file:")
		}
		b, err := hex.DecodeString(rest)
		if err != nil || len(b) != sha256.Size {
			return s, errors.New("sha256: wants 64 hex digits")
		}
		copy(s.Hash[:], b)
		return s, nil
	case "env":
		v, ok := os.LookupEnv(rest)
		if !ok || v == "" || rest == "" {
			return s, fmt.Errorf("environment variable %q is unset or empty", rest)
		}
		s.Value = []byte(v)
	case "file":
		v, err := readSecretFile(rest)
		if err != nil {
			return s, err
		}
		s.Value = v
	default:
		if ref == "" {
			return s, errors.New("required")
		}
		s.Value, s.Plaintext = []byte(ref), true
	}
	if strings.ContainsAny(string(s.Value), " \t\r\n") && hashOK {
		return s, errors.New("an API key must not contain whitespace")
	}
	s.Hash = sha256.Sum256(s.Value)
	return s, nil
}

func readSecretFile(path string) ([]byte, error) {
	b, err := boundedfile.Read(path, maxSecretFileBytes)
	if err != nil {
		return nil, fmt.Errorf("secret file: %w", err)
	}
	b = []byte(strings.TrimRight(string(b), "\r\n"))
	if len(b) == 0 {
		return nil, fmt.Errorf("secret file %s is empty", path)
	}
	return b, nil
}
