import type { TransactionSql } from '../../src/infra/postgres.js';
import { batchKey, BatchLogFormats, closingWorkSubject, triggerKey, type BatchLogFormat, type ClosingWork, type LogFormat, type ScheduleMode } from '../../subjects/closings.js';
import { JobsKeptDays } from '../../src/messaging/jobs.js';
import type { OutboxEvent } from '../outbox/sql.js';

/**
 * The closing work Postgres says is not done, as it was written (the same subjects, payloads and
 * Nats-Msg-Ids), for a resend after JOBS was lost (actors/outbox/resend.ts): report jobs still
 * pending, schedule fire times claimed without their closing, closings made whose logs are not
 * written yet (their work writes them, and makes no second closing: close.ts), and batch times
 * claimed and not appended whose shop has not closed since. Work of the last JobsKeptDays only (the
 * stream keeps a job no longer); a fire or batch time of a schedule deleted since is not sent (its
 * work is built from the schedule). Each work is idempotent: a closing is made once per job and
 * fire time, a batch appended once (close.ts, batch.ts).
 */
export async function undoneClosingWork(tx: TransactionSql): Promise<Array<OutboxEvent & { msgId: string }>> {
  const reports = await tx<Array<{ id: string; project: string; shop_id: string }>>`
    select j.id, j.project, j.shop_id from closing_jobs j
    where j.created_at > now() - ${JobsKeptDays} * interval '1 day'
      and (j.state = 'pending'
        or (j.state = 'done' and exists (
          select from closing_logs l where l.project = j.project and l.shop_id = j.shop_id and l.closing_sequence_number = j.closing_sequence_number
            and l.kind = 'closing' and l.state = 'not_present')))`;
  const triggers = await tx<Array<{ schedule_id: string; fire_at: Date; project: string; shop_id: string; mode: ScheduleMode; include_all_states: boolean; formats: LogFormat[]; location: string }>>`
    select t.schedule_id, t.fire_at, t.project, t.shop_id, s.mode, s.include_all_states, s.formats, s.location
    from closing_triggers t join closing_schedules s on s.id = t.schedule_id
    left join closings c on c.trigger_key = t.schedule_id || ':' || to_char(t.fire_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    where t.claimed_at > now() - ${JobsKeptDays} * interval '1 day'
      and (c.trigger_key is null or exists (
        select from closing_logs l where l.project = c.project and l.shop_id = c.shop_id and l.closing_sequence_number = c.sequence_number
          and l.kind = 'closing' and l.state = 'not_present'))`;
  const batches = await tx<Array<{ schedule_id: string; batch_at: Date; project: string; shop_id: string; include_all_states: boolean; batch_formats: string[] }>>`
    select b.schedule_id, b.batch_at, b.project, b.shop_id, s.include_all_states, s.batch_formats
    from closing_batches b join closing_schedules s on s.id = b.schedule_id
    where b.appended_at is null and b.claimed_at > now() - ${JobsKeptDays} * interval '1 day'
      and not exists (select from closings c where c.project = b.project and c.shop_id = b.shop_id and c.cut_off_at >= b.batch_at)`;

  const work: Array<ClosingWork & { msgId: string }> = [
    ...reports.map((r) => ({ type: 'report' as const, project: r.project, shopID: r.shop_id, jobID: r.id, msgId: `report:${r.id}` })),
    ...triggers.map((t) => ({
      type: 'trigger' as const, project: t.project, shopID: t.shop_id, scheduleID: Number(t.schedule_id), fireAt: t.fire_at.toISOString(),
      mode: t.mode, includeAllStates: t.include_all_states, formats: t.formats, location: t.location, msgId: triggerKey(Number(t.schedule_id), t.fire_at),
    })),
    ...batches.flatMap((b) => {
      const formats = b.batch_formats.filter((f): f is BatchLogFormat => (BatchLogFormats as readonly string[]).includes(f));
      return formats.length
        ? [{ type: 'batch' as const, project: b.project, shopID: b.shop_id, scheduleID: Number(b.schedule_id), batchAt: b.batch_at.toISOString(), includeAllStates: b.include_all_states, formats, msgId: batchKey(Number(b.schedule_id), b.batch_at) }]
        : [];
    }),
  ];
  return work.map(({ msgId, ...payload }) => ({ subject: closingWorkSubject(payload), payload, msgId }));
}
