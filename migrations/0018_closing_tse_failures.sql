-- How many of a closing's orders the TSE could not sign (their finish log records a TSE-Ausfall),
-- counted when the closing is made. Closings made before fiscalization had none.
alter table closings add column tse_failures integer not null default 0;
