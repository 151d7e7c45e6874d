-- An order signed by a TSE after it was written gets its fiscalReference from its TSE transaction
-- when it is read (actors/orders/sql.ts orderDocument), so that recording the signature adds a row
-- to fiscal_transactions and never rewrites the order: a rewrite of the document copies it whole
-- and touches every index of orders (the document is in one of them), which was most of what a
-- signature cost Postgres.

-- The reference in the spec's shape (Order.fiscalReference), written with the finish.
alter table fiscal_transactions add column reference json;

-- orders.fiscal_pending keeps its name and its column, so that workers of the version before go
-- on working during a rolling upgrade (they set it to false when they write the reference into
-- the document, as before; readers then find it there). From now on it says: the order's reference
-- is recorded after the order, in fiscal_transactions.reference, and the sale's receipt waits
-- while that is missing.
comment on column orders.fiscal_pending is
  'the fiscalReference is recorded after the order, in fiscal_transactions.reference (false once a worker before migration 0021 wrote it into doc)';
