-- The catalog: products, their codes and PLUs, availabilities, and prices (v2 and legacy).
--
-- Every row an import can write carries the order of the write that produced it
-- (written_at = when the request arrived, written_line = its line in a batch, 0 outside batches).
-- Batches are written in parallel chunks, so a write applies only when it is not older than the
-- row: "the later line wins" whatever order the chunks commit in.
--
-- Identifiers (sku, code, plu, category, shop) use the C collation: byte order, and prefix search
-- (LIKE 'abc%') served by the ordinary btree indexes.

create table products (
  project           text not null,
  sku               text collate "C" not null,
  doc               jsonb not null,
  searchable        boolean generated always as (coalesce((doc ->> 'searchable')::boolean, true)) stored,
  exclude_from_sync boolean generated always as (coalesce((doc ->> 'excludeFromSync')::boolean, false)) stored,
  search            tsvector generated always as (
                      to_tsvector('simple', coalesce(doc ->> 'name', '') || ' ' || coalesce(doc ->> 'description', ''))
                    ) stored,
  written_at        timestamptz not null,
  written_line      integer not null,
  primary key (project, sku)
);
create index products_search on products using gin (search);

-- Codes of products, for scanning and prefix search. A code may (wrongly) be shared by products.
create table product_codes (
  project text not null,
  code    text collate "C" not null,
  sku     text collate "C" not null,
  primary key (project, code, sku)
);
create index product_codes_sku on product_codes (project, sku);

-- A PLU belongs to one product only.
create table product_plus (
  project text not null,
  plu     text collate "C" not null,
  sku     text collate "C" not null,
  primary key (project, plu)
);
create index product_plus_sku on product_plus (project, sku);

-- value null is a tombstone: a delete inside a batch, kept so that an older line cannot bring the
-- row back. Reads skip tombstones.
create table availabilities (
  project      text not null,
  shop_id      text collate "C" not null,
  sku          text collate "C" not null,
  value        text,
  written_at   timestamptz not null,
  written_line integer not null,
  primary key (project, sku, shop_id)
);

-- Pricing v2: the prices of one product in one category, replaced as a whole.
create table category_prices (
  project      text not null,
  sku          text collate "C" not null,
  category     text collate "C" not null,
  prices       jsonb not null,
  written_at   timestamptz not null,
  written_line integer not null,
  primary key (project, sku, category)
);

-- Legacy pricing: categories with a priority, and the shops that use them.
create table pricing_categories (
  project  text not null,
  id       text collate "C" not null,
  name     text,
  priority integer not null default 0,
  primary key (project, id)
);

create table pricing_category_shops (
  project     text not null,
  category_id text collate "C" not null,
  shop_id     text collate "C" not null,
  primary key (project, category_id, shop_id),
  foreign key (project, category_id) references pricing_categories (project, id) on delete cascade
);
create index pricing_category_shops_shop on pricing_category_shops (project, shop_id);

-- Legacy prices, one row per product and category.
create table legacy_prices (
  project             text not null,
  sku                 text collate "C" not null,
  category            text collate "C" not null,
  list_price          bigint not null,
  discounted_price    bigint,
  customer_card_price bigint,
  base_price          text,
  written_at          timestamptz not null,
  written_line        integer not null,
  primary key (project, sku, category)
);

-- A whole legacy Pricing (all categories of a product) is replaced or deleted at once; this keeps
-- the order of the last such write, so an older per-category write cannot outlive it.
create table legacy_pricing_writes (
  project      text not null,
  sku          text collate "C" not null,
  written_at   timestamptz not null,
  written_line integer not null,
  primary key (project, sku)
);
