// Package inventory is the InventoryService (portico.inventory.v1): the
// catalogue and its stock, which moves between three buckets,
//
//	available --ReserveStock--> reserved --CommitReservation--> sold
//	          <--ReleaseReservation / TTL--
//
// so available+reserved+sold of an item only changes through CreateItem and
// UpdateItem (an admin restock). Stock is never negative: the service checks
// before it moves stock and the schema's CHECK constraints back it up.
//
// # Reservations
//
// ReserveStock is all-or-nothing in one transaction and keyed by order_id: a
// repeat with the same lines (in any order) returns the first reservation in
// whatever state it is now and reserves nothing more; a repeat with other
// lines is FAILED_PRECONDITION (IDEMPOTENCY_KEY_REUSED). Each line records the
// unit price at reservation time. An ACTIVE reservation expires at
// create_time + the reservation TTL (default 5m): Service.ReleaseExpired,
// which Run calls every sweep interval (default 1s), releases it, and so does
// any write that touches it first — committing an expired reservation
// releases it and fails with RESERVATION_RELEASED. GetReservation does not
// write, so it may show an expired reservation as ACTIVE until the next
// sweep.
//
// # Errors
//
// Every failure is a gRPC status. Malformed requests are INVALID_ARGUMENT with
// a google.rpc.BadRequest naming every bad field, and nothing is written.
// Other failures carry a google.rpc.ErrorInfo with domain Domain and the name
// of a portico.type.v1.Reason, sent with the gRPC code the enum gives it.
//
// Limits keep every amount far from int64 overflow in the order saga: a unit
// price is at most MaxUnitPriceMinor (1e12 minor units, 10 billion in major
// units of a two-decimal currency) and the available stock an admin sets is
// at most MaxAvailable (1e9 units); beyond them CreateItem and UpdateItem are
// INVALID_ARGUMENT naming the field (rules in inventory.proto). Reservation ids and order ids are 1-64
// characters of [A-Za-z0-9_-] (INVALID_ARGUMENT naming the field otherwise),
// checked before any lookup, so a NOT_FOUND echoes at most 64 safe
// characters.
//
// Roles. The edge enforces roles; the service also refuses
// (PERMISSION_DENIED, ADMIN_REQUIRED) a call whose principal
// (callmeta.SubjectKey or callmeta.RoleKey, which the identity step of the
// server chain sets from the verified assertion) may not run the method:
//
//	method                                  roles
//	GetItem, ListItems                      any
//	CreateItem, UpdateItem                  admin
//	ReserveStock, Commit/ReleaseReservation service (the order saga), admin
//	GetReservation                          service, admin, reader
//
// A customer reserves only through an order: a reservation names no
// customer, so no reservation is a customer's own. A call reaches the
// handler without a principal only in process (tests) or from a local
// caller of a service without identity keys (callmeta.RoleIn).
//
// # Seed catalogue
//
// Run loads this catalogue into an empty database only (one transaction), so
// a restart never resets stock:
//
//	sku           name                       price       available
//	keyboard-001  Mechanical Keyboard         49.99 USD   100
//	mouse-001     Wireless Mouse              24.99 USD   200
//	monitor-001   27-inch 4K Monitor         329.00 USD    25
//	headset-001   Noise-Cancelling Headset    89.50 USD    50
//	webcam-001    1080p Webcam                39.95 USD    75
//	usb-hub-001   7-Port USB Hub              19.99 USD   150
//
// # Concurrency
//
// Service is safe for concurrent use; every write is one Store transaction,
// and the SQLite store serializes writers (BEGIN IMMEDIATE). The
// PostgreSQL store (OpenPostgres, chosen by a postgres:// Config.DB) is
// shared by any number of replicas and keeps the same guarantees with row
// and advisory locks (see PostgresStore).
package inventory
