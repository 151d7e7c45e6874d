-- Who passed a process's checks: the approving supervisor's token sub, the supervisor who reported
-- the payment success, or the PoS that took the process over (its processedBy, else its credential
-- or token sub). Null while the checks wait and for processes checked before this column: those
-- keep answering `performedBy: "supervisor"`, as they always did.
alter table checkout_processes add column checks_performed_by text;
