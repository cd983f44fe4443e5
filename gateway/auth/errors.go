package auth

import "errors"

// Errors an authenticator returns, each wrapped in a *Failure whose Detail
// is safe to show the client. The edge maps each to one problem code.
var (
	// ErrNoCredentials: the request carries no credential the edge reads
	// (401 UNAUTHENTICATED).
	ErrNoCredentials = errors.New("auth: no credentials")
	// ErrInvalidCredentials: a credential that does not verify: unknown
	// key, bad signature, wrong issuer or audience, unknown kid (401
	// UNAUTHENTICATED, error="invalid_token").
	ErrInvalidCredentials = errors.New("auth: invalid credentials")
	// ErrMalformed: credentials sent in a way the edge refuses to read:
	// two Authorization headers, a token in the query string, two kinds of
	// credential at once, malformed signature headers (400
	// MALFORMED_CREDENTIALS, error="invalid_request").
	ErrMalformed = errors.New("auth: malformed credentials")
	// ErrExpired: a credential past its expiry: a JWT's exp, an API key's
	// or app secret's not_after (401 CREDENTIALS_EXPIRED).
	ErrExpired = errors.New("auth: credentials expired")
	// ErrReplayed: a signed request whose nonce was used before (401
	// REQUEST_REPLAYED).
	ErrReplayed = errors.New("auth: request replayed")
	// ErrClockSkew: a signed request whose timestamp is outside the
	// accepted window (401 CLOCK_SKEW).
	ErrClockSkew = errors.New("auth: timestamp outside the window")
	// ErrBodyTooLarge: a signed request's body exceeds the limit (413).
	ErrBodyTooLarge = errors.New("auth: body too large")
	// ErrUnavailable: the nonce store failed; the request is refused
	// rather than risk a replay (503 SERVICE_UNAVAILABLE).
	ErrUnavailable = errors.New("auth: nonce store unavailable")
)

// Failure is an authentication failure: one of the errors above and a
// detail for the client. The detail never holds a credential.
type Failure struct {
	Err    error
	Detail string
	// Cause, when set, is what failed underneath (a NonceStore's error
	// behind ErrUnavailable), for the edge to read; never shown as is.
	Cause error
}

func (f *Failure) Error() string { return f.Err.Error() + ": " + f.Detail }

// Unwrap returns Err and, when set, Cause.
func (f *Failure) Unwrap() []error {
	if f.Cause == nil {
		return []error{f.Err}
	}
	return []error{f.Err, f.Cause}
}

func fail(err error, detail string) error { return &Failure{Err: err, Detail: detail} }

// Detail returns the client-safe detail of err, or "" when err is no
// *Failure.
func Detail(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Detail
	}
	return ""
}
