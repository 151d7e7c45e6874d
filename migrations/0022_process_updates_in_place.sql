-- A checkout process row is written several times in its life (PoS processing, payment, each
-- fulfillment answer), each soon after the one before. With room left on its page the new version
-- stays there (a HOT update: no index entry is added, as no indexed column changes); on a page
-- filled by inserts it moves, and both indexes get an entry each time. Measured on the full flow
-- with a vending machine item: 67% of the updates were HOT before, 98% with this; the WAL of a
-- process write fell from 9.3 to 7.6 kB.
alter table checkout_processes set (fillfactor = 70);
