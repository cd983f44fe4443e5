-- Orders accepted for later (STATUS_ACCEPTED) are listed oldest first by
-- the reconciler and counted against the bound on every accept.
CREATE INDEX orders_accepted ON orders (create_time, id) WHERE status = 'STATUS_ACCEPTED';
