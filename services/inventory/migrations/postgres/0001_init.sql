-- The PostgreSQL twin of ../0001_init.sql, in the inventory schema. Times
-- are Unix nanoseconds (bigint) as in SQLite, so both backends read back
-- the same values and `portico migrate` copies rows unchanged.
CREATE TABLE items (
    sku         text   PRIMARY KEY,
    name        text   NOT NULL,
    price_minor bigint NOT NULL CHECK (price_minor >= 0),
    currency    text   NOT NULL CHECK (length(currency) = 3),
    available   bigint NOT NULL CHECK (available >= 0),
    reserved    bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    sold        bigint NOT NULL DEFAULT 0 CHECK (sold >= 0),
    update_time bigint NOT NULL
);

-- One reservation per order: order_id is the idempotency key of ReserveStock.
CREATE TABLE reservations (
    id          text   PRIMARY KEY,
    order_id    text   NOT NULL UNIQUE,
    state       text   NOT NULL CHECK (state IN ('ACTIVE', 'COMMITTED', 'RELEASED')),
    expire_time bigint NOT NULL,
    create_time bigint NOT NULL,
    update_time bigint NOT NULL
);

CREATE INDEX reservations_active_expiry ON reservations (expire_time) WHERE state = 'ACTIVE';

CREATE TABLE reservation_lines (
    reservation_id text    NOT NULL REFERENCES reservations (id),
    position       integer NOT NULL,
    sku            text    NOT NULL REFERENCES items (sku),
    quantity       integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    price_minor    bigint  NOT NULL CHECK (price_minor >= 0),
    currency       text    NOT NULL,
    PRIMARY KEY (reservation_id, position)
);
