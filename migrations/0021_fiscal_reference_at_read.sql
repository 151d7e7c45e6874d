-- An order signed by a TSE after it was written gets its fiscalReference from its TSE transaction
-- when it is read (actors/orders/document-sql.ts), so that recording the signature adds a row to
-- fiscal_transactions and never rewrites the order: a rewrite of the document copies it whole and
-- touches every index of orders (the document is in one of them), which was most of what a
-- signature cost Postgres.

-- The reference in the spec's shape (Order.fiscalReference), written with the finish.
alter table fiscal_transactions add column reference json;

-- The order's reference is the one its TSE transaction records (fiscal_transactions.reference;
-- until that is written, the sale waits for its signature). False: the order has no reference, or
-- carries it in its document (signed before this migration).
alter table orders rename column fiscal_pending to fiscal_signed_later;
