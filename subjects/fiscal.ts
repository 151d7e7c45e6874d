import { z } from 'zod';

/**
 * Fiscalization (KassenSichV): every sale is signed by a technical security device (TSE). A
 * transaction starts when a checkout process is created and finishes when it ends: as a receipt
 * (`Kassenbeleg-V1`, `Beleg^...`) when it was paid, as an abort receipt (`AVBelegabbruch`) when it
 * was aborted or failed. The TSE's answers are what an order carries as `fiscalReference`, its
 * receipt prints (with the DFKA QR code) and the DSFinV-K export lists (tse.csv,
 * transactions_tse.csv).
 *
 * The spec's Order names `fiscalReference {securityDeviceModule {serialNumber, signatureAlgorithm,
 * logTimeFormat, certificate}, logs [{timestamp, counter, processType, processData, error}]}`. A
 * receipt's QR code and the DSFinV-K tables need a little more of what the TSE answered, carried
 * beside the spec's fields: the TSE's public key, the cash register's serial as the TSE knows it
 * (the shop: one TSE client per shop), the transaction number, and each log entry's signature.
 */

export const FiscalProviders = ['fiskaly', 'local', 'none'] as const;
export type FiscalProvider = (typeof FiscalProviders)[number];

/** BSI TR-03151 names, as the TSE reports them. */
export const SignatureAlgorithms = { local: 'ecdsa-plain-SHA256', fiskaly: 'ecdsa-plain-SHA384' } as const;

/** The process types of the transactions the platform makes (DSFinV-K / DFKA names). */
export const FiscalProcessTypes = { receipt: 'Kassenbeleg-V1' } as const;

export const SecurityDeviceModule = z
  .object({
    serialNumber: z.string().describe('The TSE serial number: SHA-256 of its public key, hex (BSI TR-03153)'),
    signatureAlgorithm: z.string().describe('As the TSE reports it, such as ecdsa-plain-SHA256'),
    logTimeFormat: z.string().describe('How the log timestamps are written: unixTime or utcTime'),
    certificate: z.string().describe("The TSE's certificate (PEM); the local signer's says it is not certified"),
    publicKey: z.string().describe("The TSE's public key, base64 (the receipt's QR code and DSFinV-K tse.csv carry it)"),
  })
  .meta({ id: 'SecurityDeviceModule' });
export type SecurityDeviceModule = z.infer<typeof SecurityDeviceModule>;

export const FiscalLogEntry = z
  .object({
    timestamp: z.string().describe('When the TSE logged it, in the logTimeFormat (unixTime: seconds since 1970 as decimal text)'),
    counter: z.int().describe("The TSE's signature counter of this log entry"),
    processType: z.string().describe('Kassenbeleg-V1 (empty for the start of a transaction)'),
    processData: z.string().describe('What was signed: Beleg^<gross per VAT rate A-E>^<amount>:Bar|<amount>:Unbar, or AVBelegabbruch^...'),
    signature: z.string().optional().describe('The signature, base64'),
    error: z.string().optional().describe('Set when the TSE could not sign (TSE-Ausfall: <reason>); the sale stands'),
  })
  .meta({ id: 'FiscalLogEntry' });
export type FiscalLogEntry = z.infer<typeof FiscalLogEntry>;

export const FiscalReference = z
  .object({
    securityDeviceModule: SecurityDeviceModule,
    clientSerialNumber: z.string().describe('The cash register (the shop) as the TSE knows it'),
    transactionNumber: z.int().describe("The TSE's transaction number"),
    logs: z.array(FiscalLogEntry).describe('The start of the transaction, then its finish'),
  })
  .meta({ id: 'FiscalReference' });
export type FiscalReference = z.infer<typeof FiscalReference>;

/** The text a failed signing records in the log's `error`, on the receipt and in the export. */
export const TseOutagePrefix = 'TSE-Ausfall';
