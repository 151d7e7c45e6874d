-- The delivery log's sweep (actors/webhooks/log-sweep.ts): every worker process ticks each hour and
-- claims the hour here (unique: one of them gets it), which writes the sweep's job to the outbox in
-- the same statement. The job deletes the attempts older than WEBHOOK_LOG_DAYS (30), a bounded
-- batch at a time. A claim is kept a day.
create table webhook_log_sweeps (
  hour timestamptz primary key
);
