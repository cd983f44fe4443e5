package inventory

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/pagetoken"
)

// DefaultReservationTTL is how long a reservation stays ACTIVE uncommitted.
const DefaultReservationTTL = 5 * time.Minute

// Service implements inventoryv1.InventoryServiceServer on a Store.
type Service struct {
	inventoryv1.UnimplementedInventoryServiceServer

	store      Store
	ttl        time.Duration
	log        *slog.Logger
	pageSecret []byte
	pages      *pagetoken.Codec
}

var _ inventoryv1.InventoryServiceServer = (*Service)(nil)

// Option configures a Service.
type Option func(*Service)

// WithReservationTTL sets how long a reservation may stay uncommitted before
// it is released. Zero means DefaultReservationTTL; negative is an error.
func WithReservationTTL(d time.Duration) Option { return func(s *Service) { s.ttl = d } }

// WithLogger sets where store failures are logged. nil means discard.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithPageTokenSecret signs ListItems page tokens under secret (at least
// pagetoken.MinSecretLen bytes), which replicas share. nil means a secret
// per process.
func WithPageTokenSecret(secret []byte) Option { return func(s *Service) { s.pageSecret = secret } }

// New returns a Service on store.
func New(store Store, opts ...Option) (*Service, error) {
	s := &Service{store: store}
	for _, o := range opts {
		o(s)
	}
	if store == nil {
		return nil, errors.New("inventory: nil Store")
	}
	if s.ttl < 0 {
		return nil, errors.New("inventory: negative reservation TTL")
	}
	if s.ttl == 0 {
		s.ttl = DefaultReservationTTL
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	const list = "portico.inventory.v1.InventoryService/ListItems"
	var err error
	if s.pages, err = pagetoken.NewOrRandom(s.pageSecret, list); err != nil {
		return nil, err
	}
	return s, nil
}

// newID returns prefix followed by 20 random hex digits (80 bits).
func newID(prefix string) string {
	b := make([]byte, 10)
	_, _ = rand.Read(b) // never fails (crypto/rand documents it panics instead)
	return prefix + hex.EncodeToString(b)
}
