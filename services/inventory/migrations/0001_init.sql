-- Items and their three stock buckets. The CHECKs are the last line of
-- defence for "stock is never negative"; the service checks first.
CREATE TABLE items (
    sku         TEXT    PRIMARY KEY,
    name        TEXT    NOT NULL,
    price_minor INTEGER NOT NULL CHECK (price_minor >= 0),
    currency    TEXT    NOT NULL CHECK (length(currency) = 3),
    available   INTEGER NOT NULL CHECK (available >= 0),
    reserved    INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    sold        INTEGER NOT NULL DEFAULT 0 CHECK (sold >= 0),
    update_time INTEGER NOT NULL -- Unix nanoseconds, UTC
) STRICT;

-- One reservation per order: order_id is the idempotency key of ReserveStock.
CREATE TABLE reservations (
    id          TEXT    PRIMARY KEY,
    order_id    TEXT    NOT NULL UNIQUE,
    state       TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'COMMITTED', 'RELEASED')),
    expire_time INTEGER NOT NULL,
    create_time INTEGER NOT NULL,
    update_time INTEGER NOT NULL
) STRICT;

-- The sweeper's query: ACTIVE reservations by expiry.
CREATE INDEX reservations_active_expiry ON reservations (expire_time) WHERE state = 'ACTIVE';

CREATE TABLE reservation_lines (
    reservation_id TEXT    NOT NULL REFERENCES reservations (id),
    position       INTEGER NOT NULL,
    sku            TEXT    NOT NULL REFERENCES items (sku),
    quantity       INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    price_minor    INTEGER NOT NULL CHECK (price_minor >= 0),
    currency       TEXT    NOT NULL,
    PRIMARY KEY (reservation_id, position)
) STRICT;
