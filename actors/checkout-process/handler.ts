import { createHash, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { verifyCheckoutInfo } from '../../src/domain/signature.js';
import { AppError } from '../../src/errors.js';
import { inTransaction, type Sql } from '../../src/infra/postgres.js';
import { createMailboxes } from '../../src/messaging/mailbox.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { CheckoutInfo } from '../../subjects/checkout.js';
import { checkoutProcess, type CheckoutProcessChange, type CreateCheckoutProcessRequest } from '../../subjects/checkout-process.js';
import { eventSubject } from '../../subjects/events.js';
import { pos } from '../../subjects/pos.js';
import { decidePosUpdate, posView } from './pos.js';
import * as db from './sql.js';
import { decide, finishedOrderState, type Command, type Decision, type ProcessRecord } from './state.js';
import { orderEventPayload, processEventPayload, toCheckoutProcess, toOrder } from './views.js';

export interface CheckoutProcessDeps {
  sql: Sql;
  /** The key checkout infos were signed with. */
  signingKey: Uint8Array;
  /** How long a checkout info may be used to create a process. */
  infoTtlMs: number;
  /** Called after a transaction wrote events (wakes the outbox relay). */
  eventsWritten(): void;
}

/**
 * One logical actor per checkout process: every command for a process id runs in its mailbox, in a
 * transaction that locks the process row, decides in pure code (state.ts, pos.ts) and writes the
 * change, its events and (when it finished the process) its order together.
 */
export function createCheckoutProcessActor(deps: CheckoutProcessDeps): Route[] {
  const { sql, eventsWritten } = deps;
  const mailboxes = createMailboxes();

  const load = async (project: string, id: string): Promise<ProcessRecord> => {
    const stored = await db.findProcess(sql, project, id);
    if (!stored) throw notFound(id);
    return stored.record;
  };

  const command = async (project: string, id: string, decideFor: (process: ProcessRecord, at: Date) => Decision): Promise<ProcessRecord> => {
    const { process, wroteEvents } = await mailboxes.run(`${project}/${id}`, () =>
      inTransaction(sql, async (tx) => {
        const stored = await db.lockProcess(tx, project, id);
        if (!stored) throw notFound(id);
        const before = stored.record;
        const at = new Date();
        const decision = decideFor(before, at);
        if (decision.kind === 'refused') throw new AppError(409, 'invalid_state_transition', decision.message);
        if (decision.kind === 'invalid') throw AppError.badRequest(decision.message, decision.details);
        if (decision.kind === 'unchanged') return { process: before, wroteEvents: false };

        const after: ProcessRecord = { ...decision.next, version: before.version + 1 };
        await db.updateProcess(tx, after, after.pricing !== before.pricing);
        const events: db.OutboxEvent[] = decision.events.map((e) => ({
          subject: eventSubject(project, e.domain, id, e.event),
          payload: processEventPayload(after, e, at),
        }));
        const orderState = finishedOrderState(before, after);
        if (orderState) {
          const order = toOrder(after, orderState, await db.nextOrderNumber(tx, project, after.shopID), at);
          await db.insertOrder(tx, order, after.checkoutInfo.shop.externalId);
          events.push({ subject: eventSubject(project, 'order', id, orderState), payload: orderEventPayload(after, order) });
        }
        await db.insertEvents(tx, events);
        return { process: after, wroteEvents: events.length > 0 };
      }),
    );
    if (wroteEvents) eventsWritten();
    return process;
  };

  return [
    route(checkoutProcess.create, async ({ project, id, request }) => {
      const digest = requestDigest(request);
      if (id) {
        // A repeated PUT answers the process it made, also once its checkout info has expired.
        const existing = await db.findProcess(sql, project, id);
        if (existing) return { process: toCheckoutProcess(sameRequest(existing, digest)), created: false };
      }
      const process = await newProcess(deps, project, id ?? randomUUID(), request);
      const stored = await inTransaction(sql, async (tx) => {
        const inserted = await db.insertProcess(tx, process, digest);
        if (!inserted) return undefined;
        const at = process.createdAt;
        await db.insertEvents(tx, [
          { subject: eventSubject(project, 'checkout', process.id, 'created'), payload: processEventPayload(process, { domain: 'checkout', event: 'created' }, at) },
          { subject: eventSubject(project, 'pos', process.id, 'pending'), payload: processEventPayload(process, { domain: 'pos', event: 'pending' }, at) },
        ]);
        return inserted;
      });
      if (!stored) {
        // The same id was created in between (only a client-chosen id can collide).
        const existing = await db.findProcess(sql, project, process.id);
        if (!existing) throw AppError.unavailable('the checkout process could not be stored; try again');
        return { process: toCheckoutProcess(sameRequest(existing, digest)), created: false };
      }
      eventsWritten();
      return { process: toCheckoutProcess(stored.record), created: true };
    }),

    route(checkoutProcess.get, async ({ project, id }) => toCheckoutProcess(await load(project, id))),

    route(checkoutProcess.listByShop, async ({ project, shop, limit }) => ({
      processes: (await db.listProcessesOfShop(sql, project, shop, limit)).map(toCheckoutProcess),
    })),

    route(checkoutProcess.change, async ({ project, id, change }) =>
      toCheckoutProcess(await command(project, id, (process, at) => decide(process, commandOf(change), at))),
    ),

    route(checkoutProcess.approve, async ({ project, id, approval }) => {
      await command(project, id, (process, at) => decide(process, { type: 'approve' }, at));
      return approval;
    }),

    route(pos.get, async ({ project, id }) => posView(await load(project, id))),

    route(pos.update, async ({ project, id, patch }) => posView(await command(project, id, (process, at) => decidePosUpdate(process, patch, at)))),
  ];
}

function commandOf(change: CheckoutProcessChange): Command {
  if ('aborted' in change) return { type: 'abort' };
  if ('paymentState' in change) return { type: 'setPaymentState', paymentState: change.paymentState, paymentResult: change.paymentResult };
  return { type: 'updatePricing', pricing: change.pricing };
}

/**
 * A process from a create request: the checkout info must carry its own signature, be fresh, be for
 * this project, and offer the chosen payment method.
 */
async function newProcess(deps: CheckoutProcessDeps, project: string, id: string, request: CreateCheckoutProcessRequest): Promise<ProcessRecord> {
  const { checkoutInfo: signed, signature } = request.signedCheckoutInfo;
  verifyCheckoutInfo(signed, signature, deps.signingKey, { ttlMs: deps.infoTtlMs });
  const parsed = CheckoutInfo.safeParse(signed);
  if (!parsed.success) throw AppError.validation(parsed.error, 'checkout info');
  const info = parsed.data;
  if (info.project !== project) throw AppError.badRequest(`the checkout info was made for project ${info.project}`);
  if (!info.availableMethods.includes(request.paymentMethod)) {
    throw new AppError(400, 'invalid_payment_method', `payment method ${request.paymentMethod} is not available for this checkout (${info.availableMethods.join(', ')})`);
  }
  const approvalRequired =
    info.lineItems.some((l) => l.saleRestriction !== '') ||
    (await db.anyForceControlled(
      deps.sql,
      project,
      info.lineItems.map((l) => l.sku),
    ));
  return {
    project,
    id,
    shopID: info.shopID,
    checkoutInfo: info,
    pricing: { lineItems: info.lineItems, price: info.price },
    paymentMethod: request.paymentMethod,
    paymentInformation: request.paymentInformation ?? null,
    paymentResult: null,
    paymentState: 'pending',
    approvalRequired,
    supervisorApproval: approvalRequired ? null : true,
    paymentApproval: null,
    aborted: false,
    modified: false,
    processedOffline: request.processedOffline,
    pos: {},
    version: 1,
    createdAt: new Date(),
    finalizedAt: null,
  };
}

/** What makes two create requests the same: their content, whatever the key order. */
function requestDigest(request: CreateCheckoutProcessRequest): string {
  const { checkoutInfo, signature } = request.signedCheckoutInfo;
  const essence = { checkoutInfo, signature, paymentMethod: request.paymentMethod, paymentInformation: request.paymentInformation ?? null, processedOffline: request.processedOffline };
  let canonical: string | undefined;
  try {
    canonical = canonicalize(essence);
  } catch {
    canonical = undefined;
  }
  if (canonical === undefined) throw AppError.badRequest('the request has no canonical JSON form (a lone surrogate or a number JSON cannot hold)');
  return createHash('sha256').update(canonical).digest('hex');
}

function sameRequest(existing: db.StoredProcess, digest: string): ProcessRecord {
  if (existing.requestDigest !== digest) {
    throw AppError.conflict(`checkout process ${existing.record.id} exists and was created with another request`);
  }
  return existing.record;
}

function notFound(id: string): AppError {
  return AppError.notFound(`no checkout process with id ${id}`);
}
