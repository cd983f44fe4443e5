-- The PostgreSQL twin of ../0001_orders.sql, in the order schema, plus the
-- reconciler's lease: the order process that may drive a PENDING order
-- (lease_owner) until lease_until (the database's clock, so replicas on
-- several hosts agree). UNIQUE (customer, idempotency_key) makes one order
-- per key per customer across every replica.
CREATE TABLE orders (
    id              text   PRIMARY KEY,
    customer        text   NOT NULL,
    idempotency_key text   NOT NULL,
    request_hash    bytea  NOT NULL,
    status          text   NOT NULL,
    lines           text   NOT NULL,
    payment_method  text   NOT NULL,
    total_minor     bigint,
    total_currency  text,
    reservation_id  text   NOT NULL DEFAULT '',
    payment_id      text   NOT NULL DEFAULT '',
    failure_reason  text   NOT NULL DEFAULT '',
    failure_info    text   NOT NULL DEFAULT '{}',
    create_time     bigint NOT NULL,
    update_time     bigint NOT NULL,
    lease_owner     text   NOT NULL DEFAULT '',
    lease_until     timestamptz NOT NULL DEFAULT '-infinity',
    UNIQUE (customer, idempotency_key)
);

CREATE INDEX orders_newest ON orders (create_time DESC, id DESC);
CREATE INDEX orders_customer_newest ON orders (customer, create_time DESC, id DESC);
CREATE INDEX orders_pending ON orders (create_time, id) WHERE status = 'PENDING';
