-- Payments. A DECLINED payment is a stored result like any other.
CREATE TABLE payments (
    id             TEXT    PRIMARY KEY,
    order_id       TEXT    NOT NULL,
    amount_minor   INTEGER NOT NULL CHECK (amount_minor >= 1),
    currency       TEXT    NOT NULL CHECK (length(currency) = 3),
    method         TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('CAPTURED', 'DECLINED', 'REFUNDED')),
    failure_reason TEXT    NOT NULL DEFAULT '',
    create_time    INTEGER NOT NULL, -- Unix nanoseconds, UTC
    update_time    INTEGER NOT NULL
) STRICT;

-- ListPayments: an order's payments, oldest first (rowid breaks ties).
CREATE INDEX payments_by_order ON payments (order_id, create_time);

-- At most one CAPTURED payment per order.
CREATE UNIQUE INDEX payments_one_capture_per_order ON payments (order_id) WHERE status = 'CAPTURED';

-- Idempotency keys, written in the same transaction as their payment. The
-- primary key decides which of two concurrent first uses of a key wins.
CREATE TABLE idempotency_keys (
    idem_key     TEXT    PRIMARY KEY,
    request_hash BLOB    NOT NULL CHECK (length(request_hash) = 32),
    payment_id   TEXT    NOT NULL UNIQUE REFERENCES payments (id),
    create_time  INTEGER NOT NULL
) STRICT;
