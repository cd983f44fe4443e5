package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
const DefaultLeeway = 30 * time.Second

// AsymmetricAlgorithms are the JWS algorithms a JWTVerifier may accept:
// public-key signatures only. HS256/384/512 are never accepted (a verifier
// holding only public keys must not treat one as an HMAC secret: the
// HS/RS confusion) and neither is "none".
var AsymmetricAlgorithms = []string{
	"RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512", "EdDSA",
}

// SubjectPrefix starts the Subject of a JWT's principal unless
// JWTConfig.SharedSubjects is set: the issuer's subjects are its own
// (RFC 7519 section 4.1.2: unique within the issuer), not the names the
// config gives API keys and signed apps.
const SubjectPrefix = "jwt:"

// Claims names the JWT claims a principal is read from; a dotted name
// reaches into nested objects ("realm_access.roles").
type Claims struct {
	// Subject: a string, required. Empty means "sub".
	Subject string
	// Roles: an array of strings or one space-separated string. Empty
	// means "roles". A token without it has no roles; a name that is not
	// a ValidRole is left out.
	Roles string
	// Tenant: a string. Empty means "tenant".
	Tenant string
	// Plan: a string. Empty means "plan".
	Plan string
}

// JWTConfig configures a JWTVerifier.
type JWTConfig struct {
	// Issuer is the required iss. Required.
	Issuer string
	// Audience lists the accepted aud values; a token must name one.
	// Required.
	Audience []string
	// Algorithms is the allow-list; each must be in AsymmetricAlgorithms.
	// A key whose JWK names an alg is used with that alg only. Required.
	Algorithms []string
	// Leeway is the clock skew allowed on exp, nbf and iat. Zero means
	// DefaultLeeway.
	Leeway time.Duration
	// Claims maps claims to the principal.
	Claims Claims
	// SharedSubjects makes the principal's Subject the subject claim
	// itself, in one namespace with the subjects of API keys and signed
	// apps. False (the default) makes it SubjectPrefix + the claim, so a
	// token can never act as a configured credential's subject.
	SharedSubjects bool
	// Keys holds the verification keys. Required.
	Keys *JWKS
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// JWTVerifier verifies JWT bearer tokens (RFC 7519) with golang-jwt and
// keys from a JWKS through keyfunc: the signature by the key the header's
// kid names (required) with an allowed algorithm that fits the key's type,
// then exp (required), nbf and iat with the leeway, iss and aud. A token
// whose header has crit is refused (no extension is understood). Safe for
// concurrent use.
type JWTVerifier struct {
	cfg    JWTConfig
	parser *jwt.Parser
	kf     keyfunc.Keyfunc
}

// NewJWTVerifier validates cfg and returns its verifier.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	switch {
	case cfg.Issuer == "":
		return nil, errors.New("auth: jwt: issuer is required")
	case len(cfg.Audience) == 0:
		return nil, errors.New("auth: jwt: audience is required")
	case len(cfg.Algorithms) == 0:
		return nil, errors.New("auth: jwt: algorithms is required")
	case cfg.Keys == nil:
		return nil, errors.New("auth: jwt: keys are required")
	}
	for _, a := range cfg.Algorithms {
		if !slices.Contains(AsymmetricAlgorithms, a) {
			return nil, fmt.Errorf("auth: jwt: algorithm %q: want one of %s", a, strings.Join(AsymmetricAlgorithms, ", "))
		}
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = DefaultLeeway
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&cfg.Claims.Subject, "sub")
	def(&cfg.Claims.Roles, "roles")
	def(&cfg.Claims.Tenant, "tenant")
	def(&cfg.Claims.Plan, "plan")
	kf, err := keyfunc.New(keyfunc.Options{Storage: cfg.Keys})
	if err != nil {
		return nil, fmt.Errorf("auth: jwt: %w", err)
	}
	v := &JWTVerifier{cfg: cfg, kf: kf}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(cfg.Algorithms),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience...),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(cfg.Now),
	)
	return v, nil
}

// Verify returns the principal of the JWT tok.
func (v *JWTVerifier) Verify(ctx context.Context, tok string) (Principal, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(tok, claims, v.keyfunc(ctx))
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return Principal{}, fail(ErrExpired, "The token has expired.")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return Principal{}, fail(ErrInvalidCredentials, "The token is not valid yet.")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return Principal{}, fail(ErrInvalidCredentials, "The token's issuer is not accepted.")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return Principal{}, fail(ErrInvalidCredentials, "The token's audience is not accepted.")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return Principal{}, fail(ErrInvalidCredentials, "The token lacks a required claim (iss, aud, exp).")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return Principal{}, fail(ErrInvalidCredentials, "The token was issued in the future (iat).")
	case errors.Is(err, jwt.ErrTokenInvalidClaims):
		return Principal{}, fail(ErrInvalidCredentials, "The token has a registered claim of the wrong type.")
	case errors.Is(err, jwt.ErrTokenMalformed):
		return Principal{}, fail(ErrInvalidCredentials, "The token is malformed.")
	case err != nil:
		return Principal{}, fail(ErrInvalidCredentials, "The token's signature does not verify.")
	}
	return v.principal(claims)
}

// keyfunc returns the key of the token's kid, refusing a missing kid, a
// crit header, an alg the key's JWK does not name or that does not fit
// the key's type.
func (v *JWTVerifier) keyfunc(ctx context.Context) jwt.Keyfunc {
	kf := v.kf.KeyfuncCtx(ctx)
	return func(t *jwt.Token) (any, error) {
		if _, ok := t.Header["kid"].(string); !ok {
			return nil, errors.New("no kid")
		}
		if _, ok := t.Header["crit"]; ok {
			// RFC 7515 section 4.1.11: extensions named in crit must be
			// understood or the token refused; golang-jwt understands none.
			return nil, errors.New("crit header")
		}
		key, err := kf(t)
		if err != nil {
			return nil, err
		}
		if !fits(t.Method.Alg(), key) {
			return nil, errors.New("alg does not fit the key")
		}
		return key, nil
	}
}

// fits reports whether a key of key's type signs with alg.
func fits(alg string, key any) bool {
	switch key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(alg, "ES")
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

func (v *JWTVerifier) principal(c jwt.MapClaims) (Principal, error) {
	bad := func(what string) (Principal, error) {
		return Principal{}, fail(ErrInvalidCredentials, "The token's "+what+" claim is not valid.")
	}
	// The subject is compared exactly as sent (RFC 7519 section 2): one
	// with a space at either end or a control character is refused, never
	// trimmed into another subject.
	sub, _ := claim(c, v.cfg.Claims.Subject).(string)
	if !ValidSubject(sub) || len(sub) > maxClaimSubject(v.cfg.SharedSubjects) {
		return Principal{}, fail(ErrInvalidCredentials, "The token's subject claim is not valid: it must be 1-"+
			strconv.Itoa(maxClaimSubject(v.cfg.SharedSubjects))+" printable ASCII characters with no space at either end.")
	}
	if !v.cfg.SharedSubjects {
		sub = SubjectPrefix + sub
	}
	var roles []string
	switch r := claim(c, v.cfg.Claims.Roles).(type) {
	case nil:
	case string:
		roles = strings.Fields(r)
	case []any:
		for _, x := range r {
			s, ok := x.(string)
			if !ok {
				return bad("roles")
			}
			roles = append(roles, s)
		}
	default:
		return bad("roles")
	}
	if len(roles) > MaxRoles {
		return bad("roles")
	}
	// A name that cannot be a role ("Admin": roles are lower case,
	// compared as sent) is one no policy grants anything: it is left out,
	// so the token is verified and the policy answers 403, not 401. An
	// issuer's roles claim often holds other applications' roles too.
	roles = slices.DeleteFunc(roles, func(r string) bool { return !ValidRole(r) })
	tenant, _ := claim(c, v.cfg.Claims.Tenant).(string)
	plan, _ := claim(c, v.cfg.Claims.Plan).(string)
	if tenant != "" && !ValidSubject(tenant) {
		return bad("tenant")
	}
	if plan != "" && !ValidSubject(plan) {
		return bad("plan")
	}
	return NewPrincipal(sub, roles, tenant, plan, ViaJWT), nil
}

// maxClaimSubject is the longest subject claim a token may carry.
func maxClaimSubject(shared bool) int {
	if shared {
		return callmeta.MaxNameLen
	}
	return callmeta.MaxNameLen - len(SubjectPrefix)
}

// claim returns the claim at the dotted name, or nil.
func claim(c map[string]any, name string) any {
	var cur any = c
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}
