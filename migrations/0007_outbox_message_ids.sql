-- An outbox row may name the Nats-Msg-Id it is published with (a closing trigger's schedule and
-- fire time, say), so that writers in several processes that decide the same work publish it once.
-- Rows without one are published with their own id.
alter table outbox add column msg_id text;
