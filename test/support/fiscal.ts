import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FiscalReference } from '../../subjects/fiscal.js';
import { p, patchPos } from './checkout.js';
import type { TestService } from './service.js';

/**
 * Fiscal references as a TSE would answer them, made here rather than by a provider (the pipeline
 * that puts them on orders is built elsewhere): a real ECDSA P-256 key, the serial number as BSI
 * TR-03153 derives it (SHA-256 of the public key, hex), and real signatures (plain r‖s, as
 * `ecdsa-plain-SHA256` says) over the logged data, so a QR code's content can be verified.
 */
export interface TestTse {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The uncompressed EC point, base64: what the QR code and tse.csv carry. */
  publicKeyBase64: string;
  serialNumber: string;
  /** A PEM certificate body longer than 1000 characters, as real TSE certificates are. */
  certificate: string;
}

/** The key of a TSE's public key as TSEs give it (the uncompressed P-256 point, base64): DER SPKI is a fixed prefix and the point. */
export function pointPublicKey(base64: string): KeyObject {
  return createPublicKey({ key: Buffer.concat([Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex'), Buffer.from(base64, 'base64')]), format: 'der', type: 'spki' });
}

export function testTse(): TestTse {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const point = publicKey.export({ type: 'spki', format: 'der' }).subarray(-65);
  const body = randomBytes(1100).toString('base64').replace(/.{64}/g, '$&\n');
  return {
    privateKey,
    publicKey,
    publicKeyBase64: point.toString('base64'),
    serialNumber: createHash('sha256').update(point).digest('hex'),
    certificate: `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`,
  };
}

/** The bytes a log entry's signature covers here (a TSE signs its TR-03151 log message; the tests only need it to be the same). */
export function signedMessage(f: { transactionNumber: number; counter: number; timestamp: string; processType: string; processData: string }): Buffer {
  return Buffer.from([f.transactionNumber, f.counter, f.timestamp, f.processType, f.processData].join('|'));
}

export interface FiscalOptions {
  transactionNumber: number;
  /** The start's signature counter; the finish's is the next. */
  counter: number;
  /** unix seconds of the start; the finish is 3 seconds later. */
  startedAt: number;
  processData?: string;
  /** Makes the finish an outage: `TSE-Ausfall: <reason>`, no signature. */
  outage?: string;
  clientSerialNumber?: string;
}

export function fiscalReferenceOf(tse: TestTse, o: FiscalOptions): FiscalReference {
  const processData = o.processData ?? 'Beleg^7.98_2.38_0.00_0.00_0.00^10.36:Bar';
  const entry = (counter: number, timestamp: string, processType: string, data: string) => ({
    timestamp,
    counter,
    processType,
    processData: data,
    signature: sign('sha256', signedMessage({ transactionNumber: o.transactionNumber, counter, timestamp, processType, processData: data }), {
      key: tse.privateKey,
      dsaEncoding: 'ieee-p1363',
    }).toString('base64'),
  });
  const start = entry(o.counter, String(o.startedAt), '', '');
  const finish = o.outage
    ? { timestamp: String(o.startedAt + 3), counter: 0, processType: 'Kassenbeleg-V1', processData, error: `TSE-Ausfall: ${o.outage}` }
    : entry(o.counter + 1, String(o.startedAt + 3), 'Kassenbeleg-V1', processData);
  return {
    securityDeviceModule: {
      serialNumber: tse.serialNumber,
      signatureAlgorithm: 'ecdsa-plain-SHA256',
      logTimeFormat: 'unixTime',
      certificate: tse.certificate,
      publicKey: tse.publicKeyBase64,
    },
    clientSerialNumber: o.clientSerialNumber ?? 'shop-s1',
    transactionNumber: o.transactionNumber,
    logs: [start, finish],
  };
}

/** An order once its fiscalReference is there (its TSE transaction's finish is recorded). */
export async function fiscalizedOrder(svc: TestService, token: string, id: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await svc.request('GET', `${p}/orders/${id}`, { token });
    if (res.status === 200 && res.body.fiscalReference) return res.body;
    if (Date.now() > deadline) throw new Error(`order ${id} got no fiscalReference: ${res.status} ${res.text}`);
    await sleep(50);
  }
}

/**
 * A PoS takes a process over and finishes it with one water at 0.99 (19 %): the sale signs as
 * `Beleg^0.99_0.00_0.00_0.00_0.00^0.99:Bar`. Answers the final PATCH's response.
 */
export async function posSaleOfOneWater(svc: TestService, token: string, id: string): Promise<{ status: number; text: string }> {
  const taken = await patchPos(svc, token, id, { state: 'processing', processedBy: 'kasse-1' });
  if (taken.status !== 200) return taken;
  return patchPos(svc, token, id, {
    state: 'successful',
    lineItems: [{ sku: 'WATER', scannedCode: '', amount: 1, weight: 0, units: 0, price: 99, totalPrice: 99, taxRate: '19' }],
    taxShares: [{ rate: '19', net: 83, share: 16, total: 99 }],
    netPrice: 83,
    totalPrice: 99,
  });
}
