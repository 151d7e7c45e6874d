import type { SecurityDeviceModule } from '../../subjects/fiscal.js';

/**
 * The one interface every TSE provider implements (style.md: an outside system is one interface
 * with its providers beside it, chosen by configuration, called only from jobs): `fiskaly` (the
 * cloud TSE, SIGN DE API v2), `local` (a software signer for development and tests, not certified)
 * and `none` (an explicit choice: nothing is signed).
 *
 * A transaction is addressed by ids derived from the checkout process, so a retried call is the
 * same transaction revision: revision 1 starts it (when the process is created), revision 2
 * finishes it (when the process ends, paid or not). A provider must make a repeated call of a
 * revision harmless: the same answer again, never a second signature or a skipped counter.
 */
export interface TransactionAddress {
  project: string;
  /** The TSS (the TSE) of the project. */
  tssId: string;
  /** The TSE client: one per shop (the DSFinV-K cash register, Z_KASSE_ID); its serial is the shop id. */
  clientId: string;
  clientSerialNumber: string;
  /** Derived from the checkout process id (a UUID), the same on every attempt. */
  transactionId: string;
}

/** What the TSE logged and signed for one revision of a transaction. */
export interface SignedLog {
  /** In the device's logTimeFormat (unixTime: seconds since 1970 as decimal text). */
  timestamp: string;
  /** The same instant as an ISO 8601 date-time (receipts' QR codes and DSFinV-K carry it). */
  time: string;
  counter: number;
  processType: string;
  processData: string;
  /** base64 */
  signature: string;
}

export interface StartedTransaction {
  device: SecurityDeviceModule;
  transactionNumber: number;
  log: SignedLog;
}

export interface FinishedTransaction {
  device: SecurityDeviceModule;
  transactionNumber: number;
  log: SignedLog;
  /** The transaction's start as the TSE keeps it: answered by providers that keep their starts (TseProvider.keepsStarts). */
  started?: StartedTransaction;
}

export interface FinishRequest extends TransactionAddress {
  /** Kassenbeleg-V1 */
  processType: string;
  /** Beleg^<gross A>_<B>_<C>_<D>_<E>^<amount>:Bar|<amount>:Unbar, or AVBelegabbruch^... */
  processData: string;
}

/**
 * `signed`: the TSE answered. `retry`: no answer worth keeping (unreachable, a timeout, 5xx, 429):
 * the job tries again after `afterMs` or its schedule. `failed`: the TSE refused for good (a 4xx
 * other than 401 and 429): the job records the failure as a TSE outage at once.
 */
export type ProviderResult<T> = { kind: 'signed'; value: T } | { kind: 'retry'; reason: string; afterMs?: number } | { kind: 'failed'; reason: string };

export interface TseProvider {
  readonly name: 'fiskaly' | 'local';
  /**
   * The provider keeps each transaction's start where the jobs can read it cheaply, and answers it
   * with the finish (starting the transaction first when nothing started it): the local signer,
   * whose logs are in this database. Its start jobs record nothing, and its finishes ask for the
   * finish alone, so a sale costs one recorded row and one signing round fewer. Unset: the jobs
   * record the start, and a finish asks for the start first when none is recorded (fiskaly).
   */
  readonly keepsStarts?: boolean;
  start(tx: TransactionAddress): Promise<ProviderResult<StartedTransaction>>;
  finish(request: FinishRequest): Promise<ProviderResult<FinishedTransaction>>;
}
