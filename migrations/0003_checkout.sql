-- Checkout info: "is this product the deposit of another one?" is asked for every cart item.
-- Under the C collation like the sku it is compared with, or the index cannot answer the equality.
create index products_deposit_product on products (project, ((doc ->> 'depositProduct') collate "C")) where doc ? 'depositProduct';
