-- Company data for closings and receipts, and the locale receipts are written in.
alter table project_settings
  add column locale          text not null default 'de-DE',
  add column company_name    text not null default '',
  add column tax_number      text not null default '',
  add column vat_id          text not null default '',
  add column company_address jsonb not null default '{"street": "", "zip": "", "city": "", "country": ""}';
