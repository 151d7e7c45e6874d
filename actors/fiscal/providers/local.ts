import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { Sql } from '../../../src/infra/postgres.js';
import { LocalSignatureAlgorithm, type SecurityDeviceModule } from '../../../subjects/fiscal.js';
import type { FinishedTransaction, FinishRequest, ProviderResult, SignedLog, StartedTransaction, TransactionAddress, TseProvider } from '../provider.js';
import * as db from './local-sql.js';

/**
 * The local software signer: a stand-in TSE for development and tests. It is NOT a certified TSE
 * (BSI TR-03153): nothing it signs fulfils the KassenSichV, and its certificate says so.
 *
 * One ECDSA P-256 key pair per project, made on first use and kept in Postgres (fiscal_local_tss);
 * its public key as TSEs give theirs (and the DFKA code and tse.csv carry it): the uncompressed
 * point (0x04 ‖ x ‖ y, 65 bytes), base64; serial number = SHA-256 of those 65 bytes, hex. Each
 * signature takes the next signature counter (and a start the next transaction number) from that
 * row, kept with the signed log (unique per transaction and revision) in one statement that writes
 * only if no other signer moved the counters since they were read: a repeated call answers the
 * kept log (no counter is used up). A finish answers its transaction's start with it (the jobs
 * record no start of their own: provider.ts keepsStarts). The signer of a project is an actor:
 * the revisions asked for while it signs wait in its mailbox and are signed together, with one
 * read and one write for all of them (a TSS signs one revision after another anyway; this way a
 * burst of sales costs two statements, not as many as it has revisions, and waiting signers hold
 * no database connection). It signs
 *
 *     local-v1;<counter>;<timestamp>;<processType>;<processData>;<transactionNumber>
 *
 * (UTF-8; timestamp in unixTime: seconds since 1970) with SHA-256, the signature in IEEE P1363
 * form (r || s, 64 bytes), base64: `ecdsa-plain-SHA256`.
 */
export const LocalMessageVersion = 'local-v1';

export function localSignedMessage(log: { counter: number; timestamp: string; processType: string; processData: string }, transactionNumber: number): string {
  return [LocalMessageVersion, log.counter, log.timestamp, log.processType, log.processData, transactionNumber].join(';');
}

interface Tss {
  key: KeyObject;
  device: SecurityDeviceModule;
}

/** The revisions of a transaction: its start and its finish. */
const Start = 1;
const Finish = 2;

/** Revisions one read and write of the signer take at most. */
const MaxBatch = 64;

/** A revision waiting in its project's signer mailbox. */
interface Asked {
  transactionId: string;
  revision: number;
  processType: string;
  processData: string;
  answer(result: ProviderResult<FinishedTransaction>): void;
  fail(err: unknown): void;
}

export interface LocalProvider extends TseProvider {
  /** The project's TSE as it would register it (made on first use). */
  device(project: string): Promise<SecurityDeviceModule>;
}

export function createLocalProvider(deps: { sql: Sql }): LocalProvider {
  const { sql } = deps;
  const known = new Map<string, Promise<Tss>>();

  const tssOf = (project: string): Promise<Tss> => {
    let tss = known.get(project);
    if (!tss) {
      tss = loadTss(sql, project);
      // A failed load is tried again on the next call.
      tss.catch(() => known.delete(project));
      known.set(project, tss);
    }
    return tss;
  };

  // Per project: the revisions waiting while its signer is at work (no entry: the signer is idle).
  const mailboxes = new Map<string, Asked[]>();

  const signRevision = (address: TransactionAddress, revision: number, processType: string, processData: string) =>
    new Promise<ProviderResult<FinishedTransaction>>((answer, fail) => {
      const asked: Asked = { transactionId: address.transactionId, revision, processType, processData, answer, fail };
      const waiting = mailboxes.get(address.project);
      if (waiting) return void waiting.push(asked);
      mailboxes.set(address.project, [asked]);
      void signWaiting(address.project);
    });

  const signWaiting = async (project: string) => {
    const waiting = mailboxes.get(project)!;
    // A batch of jobs asks for all of its revisions in one go, the first of them starting this
    // signer: a microtask later they are all here, and one read and write sign them.
    await Promise.resolve();
    while (waiting.length) {
      const batch = waiting.splice(0, MaxBatch);
      try {
        const results = await signBatch(project, batch);
        batch.forEach((asked, i) => asked.answer(results[i]!));
      } catch (err) {
        for (const asked of batch) asked.fail(err);
      }
    }
    mailboxes.delete(project);
  };

  /**
   * Signs a batch in order; a revision kept before is answered as kept, and a finish answers its
   * transaction's start too (signed first when nothing started the transaction). Optimistic: the
   * counters and the kept logs are read, the batch is signed, and one statement keeps the new logs
   * with the counters they used up, unless another signer (a worker process beside this one) moved
   * the counters since the read: then the batch is read and signed again, and what that signer
   * kept is answered as kept. No transaction stays open (and no row locked) while this process
   * signs, and a batch costs two statements.
   */
  const signBatch = async (project: string, batch: readonly Asked[]): Promise<Array<ProviderResult<FinishedTransaction>>> => {
    const tss = await tssOf(project);
    const transactionIds = [...new Set(batch.map((a) => a.transactionId))];
    for (let attempt = 1; ; attempt++) {
      const read = await db.readTss(sql, project, transactionIds);
      if (!read) throw new Error(`the local TSS of project ${project} is gone`);
      const { results, signed, counters } = await signInOrder(tss, batch, read);
      if (!signed.length || (await db.keepLogs(sql, project, signed, read, counters))) return results;
      if (attempt === MaxSigningAttempts) throw new Error(`the local TSS of project ${project} kept changing under this signer (${attempt} attempts)`);
    }
  };

  return {
    name: 'local',
    keepsStarts: true,
    device: async (project) => (await tssOf(project)).device,
    start: (tx) => signRevision(tx, Start, '', ''),
    finish: (request: FinishRequest) => signRevision(request, Finish, request.processType, request.processData),
  };
}

/** Another signer's write between a batch's read and its write makes it sign again; after this many, the jobs try later. */
const MaxSigningAttempts = 10;

/**
 * What a batch answers, given the counters and kept logs read: the logs newly signed, and the
 * counters after them. The counters are given in order here; the signatures are made side by side
 * in libuv's thread pool (crypto.sign with a callback), so that a batch's ECDSA work (some 40 µs a
 * signature) does not hold up the event loop that answers checkouts.
 */
async function signInOrder(tss: Tss, batch: readonly Asked[], read: db.TssCounters & { kept: db.KeptLog[] }) {
  const kept = new Map(read.kept.map((log) => [`${log.transaction_id}/${log.revision}`, log]));
  const counters = { signatureCounter: read.signatureCounter, transactionNumber: read.transactionNumber };
  const unixTime = Math.floor(Date.now() / 1000);
  const signed: db.KeptLog[] = [];
  const signNew = (transactionId: string, revision: number, transactionNumber: number, processType: string, processData: string): db.KeptLog => {
    const log = { transaction_id: transactionId, revision, transaction_number: transactionNumber, counter: ++counters.signatureCounter, unix_time: unixTime, process_type: processType, process_data: processData, signature: '' };
    kept.set(`${transactionId}/${revision}`, log);
    signed.push(log);
    return log;
  };
  const answered = batch.map(({ transactionId, revision, processType, processData }) => {
    const start = kept.get(`${transactionId}/${Start}`) ?? signNew(transactionId, Start, ++counters.transactionNumber, '', '');
    if (revision === Start) return { start };
    return { start, finish: kept.get(`${transactionId}/${revision}`) ?? signNew(transactionId, revision, start.transaction_number, processType, processData) };
  });
  await Promise.all(
    signed.map(async (log) => {
      const message = localSignedMessage({ counter: log.counter, timestamp: String(unixTime), processType: log.process_type, processData: log.process_data }, log.transaction_number);
      log.signature = (await signInPool('sha256', Buffer.from(message, 'utf8'), { key: tss.key, dsaEncoding: 'ieee-p1363' })).toString('base64');
    }),
  );
  const answer = (log: db.KeptLog): StartedTransaction => ({ device: tss.device, transactionNumber: log.transaction_number, log: signedLog(log) });
  const results = answered.map(({ start, finish }): ProviderResult<FinishedTransaction> =>
    finish ? { kind: 'signed', value: { ...answer(finish), started: answer(start) } } : { kind: 'signed', value: answer(start) },
  );
  return { results, signed, counters };
}

const signInPool = promisify(sign);

function signedLog(row: db.LogRow): SignedLog {
  return {
    timestamp: String(row.unix_time),
    time: new Date(row.unix_time * 1000).toISOString(),
    counter: row.counter,
    processType: row.process_type,
    processData: row.process_data,
    signature: row.signature,
  };
}

async function loadTss(sql: Sql, project: string): Promise<Tss> {
  const row = (await db.findTss(sql, project)) ?? (await db.insertTss(sql, project, newTss()));
  return {
    key: createPrivateKey(row.private_key),
    device: {
      serialNumber: row.serial_number,
      signatureAlgorithm: LocalSignatureAlgorithm,
      logTimeFormat: 'unixTime',
      certificate: row.certificate,
      publicKey: uncompressedPoint(row.public_key),
    },
  };
}

/**
 * The DER SPKI of a P-256 key is this prefix and the uncompressed point. TSSs made before
 * 2026-11-26 kept the SPKI (and their serial, its hash, stays theirs); they show the point too.
 */
const P256SpkiPrefix = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');

export function uncompressedPoint(publicKey: string): string {
  const der = Buffer.from(publicKey, 'base64');
  return der.length === P256SpkiPrefix.length + 65 && der.subarray(0, P256SpkiPrefix.length).equals(P256SpkiPrefix)
    ? der.subarray(P256SpkiPrefix.length).toString('base64')
    : publicKey;
}

function newTss(): db.TssRow {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const point = publicKey.export({ type: 'spki', format: 'der' }).subarray(P256SpkiPrefix.length);
  const serial = createHash('sha256').update(point).digest('hex');
  const certificate = [
    'NOT CERTIFIED: the local software signer of checkout-platform, not a TSE certified by the BSI (TR-03153).',
    'Sales signed with it are not fiscalized (KassenSichV); do not register it with the tax office.',
    `Serial number: ${serial}`,
    publicKey.export({ type: 'spki', format: 'pem' }).toString().trim(),
  ].join('\n');
  return {
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    public_key: point.toString('base64'),
    serial_number: serial,
    certificate,
  };
}
