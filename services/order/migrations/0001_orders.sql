-- One row per order. The idempotency record lives on the same row, so one
-- statement inserts or deletes both; UNIQUE (customer, idempotency_key)
-- scopes keys per customer.
CREATE TABLE orders (
    id              TEXT PRIMARY KEY,
    customer        TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    request_hash    BLOB NOT NULL,
    status          TEXT NOT NULL,              -- orderv1.Order_Status name
    lines           TEXT NOT NULL,              -- JSON array of lines
    payment_method  TEXT NOT NULL,
    total_minor     INTEGER,                    -- NULL until reserved
    total_currency  TEXT,
    reservation_id  TEXT NOT NULL DEFAULT '',
    payment_id      TEXT NOT NULL DEFAULT '',
    failure_reason  TEXT NOT NULL DEFAULT '',
    failure_info    TEXT NOT NULL DEFAULT '{}', -- JSON object
    create_time     INTEGER NOT NULL,           -- Unix nanoseconds
    update_time     INTEGER NOT NULL,           -- Unix nanoseconds
    UNIQUE (customer, idempotency_key)
);

CREATE INDEX orders_newest ON orders (create_time DESC, id DESC);
CREATE INDEX orders_customer_newest ON orders (customer, create_time DESC, id DESC);
CREATE INDEX orders_status_created ON orders (status, create_time);
