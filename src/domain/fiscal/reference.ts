import { FiscalProcessTypes, FiscalReference, TseOutagePrefix, type FiscalLogEntry } from '../../../subjects/fiscal.js';

/**
 * What receipts and the DSFinV-K export read from an order's fiscal reference (subjects/fiscal.ts):
 * its start and finish log entries, their times, and the DFKA QR code. Pure.
 *
 * The start entry comes first and the finish entry last (the lead's contract says second; the last
 * is the same entry then, and still the finish when a provider ever logs an update between them).
 */

export interface FiscalTransaction {
  reference: FiscalReference;
  start: FiscalLogEntry;
  finish: FiscalLogEntry;
  /** The start and finish log times; undefined when the TSE's time cannot be read. */
  startedAt?: Date;
  finishedAt?: Date;
  /** The finish's error (`TSE-Ausfall: <reason>`) when the TSE could not sign: no signature to show. */
  outage?: string;
}

/**
 * The fiscal reference of a stored order document, or undefined when it has none (provider
 * `none`, orders from before fiscalization) or one that does not fit the contract: a receipt or an
 * export then says there is no TSE data rather than failing.
 */
export function readFiscalReference(value: unknown): FiscalReference | undefined {
  if (value === undefined || value === null) return undefined;
  const parsed = FiscalReference.safeParse(value);
  return parsed.success && parsed.data.logs.length > 0 ? parsed.data : undefined;
}

export function fiscalTransaction(reference: FiscalReference): FiscalTransaction {
  const start = reference.logs[0]!;
  const finish = reference.logs.at(-1)!;
  const format = reference.securityDeviceModule.logTimeFormat;
  const outage = finish.error !== undefined && finish.error !== '' ? finish.error : undefined;
  return { reference, start, finish, startedAt: tseLogTime(start.timestamp, format), finishedAt: tseLogTime(finish.timestamp, format), outage };
}

/** The reason of an outage, without the `TSE-Ausfall` prefix the receipt prints as its heading. */
export function outageReason(error: string): string {
  return error.startsWith(TseOutagePrefix) ? error.slice(TseOutagePrefix.length).replace(/^[\s:–-]+/u, '') : error;
}

/**
 * A log time as the TSE wrote it, in its logTimeFormat (BSI TR-03151): `unixTime` (seconds since
 * 1970, decimal text), `utcTime` (YYMMDDhhmm[ss]Z), `generalizedTime` (YYYYMMDDhhmmss[.fff]Z); an
 * ISO 8601 time is read whatever the format says (cloud TSEs answer in it).
 */
export function tseLogTime(timestamp: string, logTimeFormat: string): Date | undefined {
  const value = timestamp.trim();
  let ms: number | undefined;
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) ms = Date.parse(value);
  else if (logTimeFormat === 'unixTime' || /^\d{9,11}(?:\.\d+)?$/.test(value)) ms = /^\d+(?:\.\d+)?$/.test(value) ? Math.round(Number(value) * 1000) : NaN;
  else {
    const utc = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?Z$/.exec(value);
    const generalized = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,3}))?Z$/.exec(value);
    if (utc) ms = Date.UTC(2000 + Number(utc[1]), Number(utc[2]) - 1, Number(utc[3]), Number(utc[4]), Number(utc[5]), Number(utc[6] ?? 0));
    else if (generalized) {
      const [, y, mo, d, h, mi, s, f = '0'] = generalized;
      ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(f.padEnd(3, '0')));
    }
  }
  return ms !== undefined && Number.isFinite(ms) ? new Date(ms) : undefined;
}

/**
 * A time as the DFKA QR code and the DSFinV-K TSE columns write it: ISO 8601 in UTC with
 * milliseconds (`2019-07-10T18:41:04.000Z`); the TSE's own text when it could not be read.
 */
export function dfkaTime(at: Date | undefined, raw: string): string {
  return at ? at.toISOString() : raw;
}

/**
 * The content of the DFKA QR code ("QR-Code auf Kassenbelegen", version V0):
 * `V0;<client serial>;<process type>;<process data>;<tx number>;<signature counter>;<start>;<log
 * time>;<signature algorithm>;<log time format>;<signature>;<public key>`, the signature counter,
 * log time and signature those of the finish. Undefined on an outage: there is nothing signed to
 * check, and a code a checker cannot verify would only mislead.
 */
export function dfkaQrCode(tx: FiscalTransaction): string | undefined {
  if (tx.outage || !tx.finish.signature) return undefined;
  const { reference: ref, start, finish } = tx;
  const tse = ref.securityDeviceModule;
  return [
    'V0',
    ref.clientSerialNumber,
    finish.processType || FiscalProcessTypes.receipt,
    finish.processData,
    String(ref.transactionNumber),
    String(finish.counter),
    dfkaTime(tx.startedAt, start.timestamp),
    dfkaTime(tx.finishedAt, finish.timestamp),
    tse.signatureAlgorithm,
    tse.logTimeFormat,
    finish.signature,
    tse.publicKey,
  ].join(';');
}

/** Whether an order's finish log records a failure: what a closing counts as its TSE failures. */
export function isTseFailure(reference: FiscalReference | undefined): boolean {
  return reference !== undefined && fiscalTransaction(reference).outage !== undefined;
}
