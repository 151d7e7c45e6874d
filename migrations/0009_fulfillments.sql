-- Fulfillments (deliveries by vending machines and lockers) are part of their checkout process:
-- the process actor writes them with the process, in its version-compared statement
-- (actors/checkout-process/fulfillments.ts). The index finds the process of a fulfillment id, for
-- GET and PATCH /{project}/fulfillments/{id}.
alter table checkout_processes add column fulfillments jsonb not null default '[]';

create table fulfillment_index (
  project    text not null,
  id         text collate "C" not null,
  process_id text collate "C" not null,
  primary key (project, id)
);
