import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Sql } from '../../../src/infra/postgres.js';
import { LocalSignatureAlgorithm, type SecurityDeviceModule } from '../../../subjects/fiscal.js';
import type { FinishRequest, ProviderResult, SignedLog, StartedTransaction, TransactionAddress, TseProvider } from '../provider.js';
import * as db from './local-sql.js';

/**
 * The local software signer: a stand-in TSE for development and tests. It is NOT a certified TSE
 * (BSI TR-03153): nothing it signs fulfils the KassenSichV, and its certificate says so.
 *
 * One ECDSA P-256 key pair per project, made on first use and kept in Postgres (fiscal_local_tss);
 * serial number = SHA-256 of the public key (DER SPKI), hex. Each signature takes the next
 * signature counter (and a start the next transaction number) from that row, locked in the
 * transaction that keeps the signed log, which is unique per (transaction, revision): a repeated
 * call rolls back (the counter is not used up) and answers the stored log. It signs
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

/** Thrown inside a signing transaction to roll it back: the revision was signed already. */
const SignedBefore = Symbol('signed before');

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

  const signRevision = async (address: TransactionAddress, revision: number, processType: string, processData: string): Promise<ProviderResult<StartedTransaction>> => {
    const { project, transactionId } = address;
    const tss = await tssOf(project);
    const outcome = await sql
      .begin(async (tx) => {
        const counters = await db.takeCounters(tx, project, transactionId, revision === Start);
        if (!counters) throw new Error(`the local TSS of project ${project} is gone`);
        if (counters.transaction_number === null) return undefined;
        const unixTime = Math.floor(Date.now() / 1000);
        const log: SignedLog = { timestamp: String(unixTime), time: new Date(unixTime * 1000).toISOString(), counter: counters.counter, processType, processData, signature: '' };
        log.signature = sign('sha256', Buffer.from(localSignedMessage(log, counters.transaction_number), 'utf8'), { key: tss.key, dsaEncoding: 'ieee-p1363' }).toString('base64');
        const kept = await db.insertLog(tx, project, transactionId, revision, {
          transaction_number: counters.transaction_number, counter: log.counter, unix_time: unixTime, process_type: processType, process_data: processData, signature: log.signature,
        });
        if (!kept) throw SignedBefore;
        return { device: tss.device, transactionNumber: counters.transaction_number, log };
      })
      .catch(async (err: unknown) => {
        if (err !== SignedBefore) throw err;
        const stored = await db.findLog(sql, project, transactionId, revision);
        if (!stored) throw new Error(`log ${revision} of transaction ${transactionId} neither kept nor found`);
        return { device: tss.device, transactionNumber: stored.transaction_number, log: signedLog(stored) };
      });
    if (!outcome) return { kind: 'failed', reason: `transaction ${transactionId} was never started` };
    return { kind: 'signed', value: outcome as StartedTransaction };
  };

  return {
    name: 'local',
    device: async (project) => (await tssOf(project)).device,
    start: (tx) => signRevision(tx, Start, '', ''),
    finish: (request: FinishRequest) => signRevision(request, Finish, request.processType, request.processData),
  };
}

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
      publicKey: row.public_key,
    },
  };
}

function newTss(): db.TssRow {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const serial = createHash('sha256').update(spki).digest('hex');
  const certificate = [
    'NOT CERTIFIED: the local software signer of checkout-platform, not a TSE certified by the BSI (TR-03153).',
    'Sales signed with it are not fiscalized (KassenSichV); do not register it with the tax office.',
    `Serial number: ${serial}`,
    publicKey.export({ type: 'spki', format: 'pem' }).toString().trim(),
  ].join('\n');
  return {
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    public_key: spki.toString('base64'),
    serial_number: serial,
    certificate,
  };
}
