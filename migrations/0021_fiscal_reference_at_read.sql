-- An order signed by a TSE after it was written gets its fiscalReference from its TSE transaction
-- (fiscal_transactions: device, client serial, transaction number, start and finish logs) when it
-- is read (actors/orders/sql.ts orderDocument), so that recording the signature writes only the
-- transaction row and never rewrites the order: a rewrite of the document copies it whole and
-- touches every index of orders (the document is in one of them), which was most of what a
-- signature cost Postgres.

-- orders.fiscal_pending keeps its name and its column, so that workers of the version before go
-- on working during a rolling upgrade (they set it to false when they write the reference into
-- the document, as before; readers then find it there). From now on it says: the order's reference
-- is the one its TSE transaction records, and the sale's receipt waits until the finish is there.
comment on column orders.fiscal_pending is
  'the fiscalReference is the one fiscal_transactions records for the process (false once a worker before migration 0021 wrote it into doc)';
