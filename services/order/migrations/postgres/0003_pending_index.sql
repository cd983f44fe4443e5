-- 0001's orders_pending filtered on status = 'PENDING', which no row ever
-- has: statuses are stored by their enum names ('STATUS_PENDING'), so the
-- reconciler's scan of PENDING orders could never use it and read the
-- whole table instead, every reconcile interval on every replica.
DROP INDEX orders_pending;
CREATE INDEX orders_pending ON orders (create_time, id) WHERE status = 'STATUS_PENDING';
