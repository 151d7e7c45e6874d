-- Checkout processes, the orders they become, and the outbox of events.
--
-- A process row is its actor's state: a command reads it, decides in pure code
-- (actors/checkout-process/state.ts) and writes the row, the events and the order in one statement
-- that applies only if `version` is still the one it read. `version` counts the changes; events carry it.

create table checkout_processes (
  project             text not null,
  id                  text collate "C" not null,
  shop_id             text collate "C" not null,
  -- What a PUT with a client-chosen id must repeat to be "the same request" (sha-256, hex).
  request_digest      text not null,
  -- As the client sent it back (json keeps its text, so a read shows what was signed).
  checkout_info       json not null,
  -- Null until a pricing update (or a PoS's final figures): the checkout info's own pricing holds.
  pricing             json,
  payment_method      text not null,
  payment_information json,
  payment_result      json,
  payment_state       text not null default 'pending'
                      check (payment_state in ('pending', 'processing', 'transferred', 'successful', 'failed')),
  approval_required   boolean not null,
  supervisor_approval boolean,
  payment_approval    boolean,
  aborted             boolean not null default false,
  modified            boolean not null default false,
  processed_offline   boolean not null default false,
  -- What a PoS said: processedBy, failedReason, loyaltyCard.
  pos                 jsonb not null default '{}',
  version             integer not null default 1,
  created_at          timestamptz not null,
  finalized_at        timestamptz,
  updated_at          timestamptz not null default now(),
  primary key (project, id)
);
create index checkout_processes_by_shop on checkout_processes (project, shop_id, created_at desc);

-- Orders of a shop are numbered 1, 2, 3, ... without gaps (closings cover ranges of them). The
-- counter row is locked by the statement that takes a number until it commits, so numbers follow
-- commit order.
create table order_sequences (
  project     text not null,
  shop_id     text collate "C" not null,
  last_number bigint not null,
  primary key (project, shop_id)
);

-- One order per process: the order id is the process id, so a repeated finish cannot double it.
create table orders (
  project          text not null,
  id               text collate "C" not null,
  shop_id          text collate "C" not null,
  shop_external_id text collate "C",
  sequence_number  bigint not null,
  state            text not null,
  finalized_at     timestamptz not null,
  doc              json not null,
  primary key (project, id),
  unique (project, shop_id, sequence_number)
);
create index orders_by_time on orders (project, finalized_at, id);
create index orders_by_shop on orders (project, shop_id, finalized_at, id);
create index orders_by_shop_external_id on orders (project, shop_external_id, finalized_at, id);

-- Events written with the change that caused them; the relay publishes them to JetStream in `seq`
-- order with Nats-Msg-Id = id, then deletes them.
create table outbox (
  seq        bigint generated always as identity primary key,
  id         uuid not null default gen_random_uuid(),
  subject    text not null,
  payload    json not null,
  created_at timestamptz not null default now()
);
