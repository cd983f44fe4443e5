package gateway

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/nonce"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/route"
)

// buildAuth builds the authenticator chain of cfg: its API keys (legacy
// tokens included), JWT verifier and signed apps. nonces is the process's
// nonce store (it outlives a reload); maxBody bounds a signed body.
func buildAuth(cfg config.Config, nonces auth.NonceStore, maxBody int64) (*auth.Chain, error) {
	a := cfg.Auth
	var keys []auth.APIKey
	for _, t := range a.Tokens {
		keys = append(keys, auth.APIKey{Hash: sha256.Sum256([]byte(t.Token)), Principal: auth.NewPrincipal(t.Subject, []string{t.Role}, "", "", "")})
	}
	for _, k := range a.APIKeys {
		s, err := config.ResolveSecret(k.Key, true)
		if err != nil {
			return nil, err
		}
		keys = append(keys, auth.APIKey{Hash: s.Hash, Principal: auth.NewPrincipal(k.Subject, k.Roles, k.Tenant, k.Plan, ""), NotAfter: parseTime(k.NotAfter)})
	}
	c := &auth.Chain{MaxTokenBytes: a.MaxTokenBytes}
	var err error
	if c.Keys, err = auth.NewAPIKeys(keys, nil); err != nil {
		return nil, err
	}
	if a.JWT.Issuer != "" {
		if c.JWT, err = buildJWT(a.JWT); err != nil {
			return nil, err
		}
	}
	if len(a.SignedApps.Apps) > 0 {
		apps := make([]auth.App, len(a.SignedApps.Apps))
		for i, app := range a.SignedApps.Apps {
			s, err := config.ResolveSecret(app.Secret, false)
			if err != nil {
				return nil, err
			}
			apps[i] = auth.App{ID: app.ID, Secret: s.Value, NotAfter: parseTime(app.NotAfter),
				Principal: auth.NewPrincipal(app.Subject, app.Roles, app.Tenant, app.Plan, "")}
		}
		c.Apps, err = auth.NewSignedApps(auth.SignedAppsConfig{Apps: apps, Nonces: nonces, Window: a.SignedApps.Window, MaxBodyBytes: maxBody})
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func buildJWT(j config.JWTConfig) (*auth.JWTVerifier, error) {
	var keys *auth.JWKS
	if j.JWKSFile != "" {
		var err error
		if keys, err = auth.NewJWKSFile(j.JWKSFile); err != nil {
			return nil, err
		}
	} else {
		keys = auth.NewJWKSURL(j.JWKSURL, auth.JWKSOptions{Timeout: j.Timeout, RefreshInterval: j.RefreshInterval, MinRefresh: j.MinRefresh})
	}
	return auth.NewJWTVerifier(auth.JWTConfig{
		Issuer: j.Issuer, Audience: j.Audience, Algorithms: j.Algorithms, Leeway: j.Leeway, Keys: keys,
		Claims:         auth.Claims{Subject: j.Claims.Subject, Roles: j.Claims.Roles, Tenant: j.Claims.Tenant, Plan: j.Claims.Plan},
		SharedSubjects: j.SharedSubjects,
	})
}

// buildPolicy resolves the policy rules (or the built-in ones) against
// the route table.
func buildPolicy(cfg config.Config, table *route.Table) (*auth.Policy, error) {
	if len(cfg.Auth.Policy) == 0 {
		return auth.DefaultPolicy(table.Routes()), nil
	}
	pol, err := auth.NewPolicy(cfg.Auth.PolicyRules(), table.Routes())
	if err == nil {
		return pol, nil
	}
	// Each fault reads "auth.policy[i].allow[j]: ...", as the config's
	// other sections' do.
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = fmt.Errorf("auth.%w", e)
	}
	return nil, fmt.Errorf("gateway config: %w", errors.Join(out...))
}

// maxBodyOf is the largest body any route accepts: what a signed request's
// body may be when it is hashed (the route's own limit applies after).
func maxBodyOf(eps map[*route.Route]*endpoint) int64 {
	var m int64
	for _, ep := range eps {
		m = max(m, ep.maxBody)
	}
	return m
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s) // validated
	return t
}

// refuseAuth answers a failed authentication or authorisation with pr
// and counts it (portico_gateway_auth_failures_total) by its code.
func (s *Server) refuseAuth(w http.ResponseWriter, r *http.Request, pr *problem.Problem) {
	s.metrics.AuthFailure(pr.Code)
	s.writeProblem(w, r, pr)
}

// authReasons are the auth failure series created at zero.
var authReasons = []string{problem.CodeUnauthenticated, problem.CodeMalformedCredentials, problem.CodeCredentialsExpired,
	problem.CodeRequestReplayed, problem.CodeClockSkew, problem.CodeForbidden}

// authProblem maps an authentication failure to its problem; the detail
// is the failure's client-safe one.
func authProblem(err error) *problem.Problem {
	code, challenge := problem.CodeUnauthenticated, `Bearer realm="portico"`
	switch {
	case errors.Is(err, auth.ErrMalformed):
		code, challenge = problem.CodeMalformedCredentials, challenge+`, error="invalid_request"`
	case errors.Is(err, auth.ErrExpired):
		code, challenge = problem.CodeCredentialsExpired, challenge+`, error="invalid_token"`
	case errors.Is(err, auth.ErrReplayed):
		code = problem.CodeRequestReplayed
	case errors.Is(err, auth.ErrClockSkew):
		code = problem.CodeClockSkew
	case errors.Is(err, auth.ErrBodyTooLarge):
		code, challenge = problem.CodeContentTooLarge, ""
	case errors.Is(err, auth.ErrUnavailable):
		code, challenge = problem.CodeServiceUnavailable, ""
	case errors.Is(err, auth.ErrInvalidCredentials):
		challenge += `, error="invalid_token"`
	}
	detail := auth.Detail(err)
	if detail == "" {
		detail = "Send a valid token as Authorization: Bearer <token>."
	}
	p := problem.New(code, detail)
	p.Challenge = challenge
	if code == problem.CodeServiceUnavailable {
		p.RetryAfter = 1
		nonceUnavailable(p, err)
	}
	return p
}

// nonceUnavailable says in p, the 503 of a nonce store that failed, why
// and when to retry, when the store said so (nonce.UnavailableError).
func nonceUnavailable(p *problem.Problem, err error) {
	var ue *nonce.UnavailableError
	if !errors.As(err, &ue) {
		return
	}
	p.Detail = "The gateway cannot check nonces right now: " + ue.Reason + "; nothing was sent to any service."
	if ue.RetryAfter > 0 {
		p.RetryAfter = ceilSeconds(ue.RetryAfter)
	}
}

// buildAccess builds sn's authenticator (unless WithAuthenticator gave
// one), policy and CORS answerer from its config, and logs the auth
// warnings. sn.table and sn.endpoints must be built.
func (s *Server) buildAccess(sn *snapshot) error {
	var err error
	cfg := sn.cfg
	if sn.auth = s.o.authenticator; sn.auth == nil {
		if sn.auth, err = buildAuth(cfg, sn.nonces, maxBodyOf(sn.endpoints)); err != nil {
			return err
		}
		a := cfg.Auth
		if len(a.Tokens)+len(a.APIKeys)+len(a.SignedApps.Apps) == 0 && a.JWT.Issuer == "" {
			s.log.Warn("no credentials configured (auth.api_keys, auth.jwt, auth.signed_apps): every /api request will be 401")
		}
	}
	if sn.policy, err = buildPolicy(cfg, sn.table); err != nil {
		return err
	}
	for _, w := range cfg.AuthWarnings(sn.table.Routes()) {
		s.log.Warn(w)
	}
	if len(cfg.Auth.Policy) > 0 {
		sn.openAPI = documentPolicy(s.openAPI, sn.policy, sn.table.Routes())
	}
	sn.cors = newCORS(cfg.CORS, sn.table.Routes())
	return nil
}
