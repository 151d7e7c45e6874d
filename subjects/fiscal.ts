import { z } from 'zod';
import { ProjectId, subjectToken } from './common.js';
import { endpoint } from './contract.js';
import { jobFilter, jobSubject } from './jobs.js';

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

/** The local signer's algorithm, by its BSI TR-03151 name (a cloud TSE reports its own). */
export const LocalSignatureAlgorithm = 'ecdsa-plain-SHA256';

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

/**
 * The project's TSE (settings `fiscalization`). `apiKey`, `apiSecret` and `adminPin` are write-only:
 * a PUT without them keeps the stored ones, and no answer, event or log line carries them.
 * Without a choice a project signs with `local` outside production; in production it cannot sell
 * (checkout process creation answers 409 `fiscalization_required`).
 */
export const FiscalizationSettings = z
  .object({
    provider: z.enum(FiscalProviders).describe('fiskaly (the cloud TSE), local (a software signer, NOT certified: development and tests) or none (nothing is signed)'),
    tssId: z.string().min(1).max(200).optional().describe('fiskaly: the TSS id'),
    apiKey: z.string().min(1).max(500).optional().describe('fiskaly: the API key (write-only)'),
    apiSecret: z.string().min(1).max(500).optional().describe('fiskaly: the API secret (write-only)'),
    adminPin: z.string().min(1).max(100).optional().describe('fiskaly: the admin PIN of the TSS (write-only)'),
    baseUrl: z.url({ protocol: /^https?$/ }).optional().describe('fiskaly: the SIGN DE API base (default https://kassensichv-middleware.fiskaly.com/api/v2)'),
    reason: z.string().max(500).optional().describe('none: why the project signs nothing (written into the DSFinV-K export)'),
  })
  .meta({ id: 'FiscalizationSettings' });
export type FiscalizationSettings = z.infer<typeof FiscalizationSettings>;

/** The secrets of FiscalizationSettings, never answered. */
export const FiscalSecrets = ['apiKey', 'apiSecret', 'adminPin'] as const;

/**
 * What fiskaly cannot sign without: the TSS, and the API key and secret that log in. The admin PIN
 * is only needed to register a shop's TSE client the first time, so a TSS whose clients exist can do
 * without it.
 */
const FiskalyNeeds = { tssId: 'the TSS id', apiKey: 'the API key', apiSecret: 'the API secret' } as const;

/**
 * The fields a choice lacks for its provider to sign (empty: it can), each with what it is. A PUT of
 * such a choice is refused (400, one detail per field), so a project never runs on a TSE that
 * refuses every sale; the fiscal workers check the same before they call.
 */
export function missingFiscalFields(settings: FiscalizationSettings | undefined): Array<{ field: keyof typeof FiskalyNeeds; what: string }> {
  if (settings?.provider !== 'fiskaly') return [];
  return Object.entries(FiskalyNeeds).flatMap(([field, what]) => (settings[field as keyof typeof FiskalyNeeds] ? [] : [{ field: field as keyof typeof FiskalyNeeds, what }]));
}

export const FiscalizationView = FiscalizationSettings.omit({ apiKey: true, apiSecret: true, adminPin: true })
  .extend({
    apiKeySet: z.boolean().describe('Whether an API key is stored (it is never answered)'),
    apiSecretSet: z.boolean().describe('Whether an API secret is stored (it is never answered)'),
    adminPinSet: z.boolean().describe('Whether an admin PIN is stored (it is never answered)'),
  })
  .meta({ id: 'FiscalizationView' });
export type FiscalizationView = z.infer<typeof FiscalizationView>;

export function fiscalizationView(stored: FiscalizationSettings): FiscalizationView {
  const { apiKey, apiSecret, adminPin, ...rest } = stored;
  return { ...rest, apiKeySet: apiKey !== undefined, apiSecretSet: apiSecret !== undefined, adminPinSet: adminPin !== undefined };
}

/** The provider a project without a choice signs with: local outside production, none to choose in production. */
export function defaultFiscalProvider(env: string): FiscalProvider | null {
  return env === 'production' ? null : 'local';
}

export const FiscalizationRequiredMessage =
  'this project has not chosen how its sales are signed (KassenSichV): PUT /{project}/settings with fiscalization.provider ' +
  '"fiskaly" (with tssId, apiKey, apiSecret, adminPin), or "none" with a reason; "local" is a signer for tests, not certified';

/**
 * Durable work (JetStream JOBS, kind `fiscal`): the TSE calls of a checkout process's transaction,
 * written to the outbox with the process change that causes them: `start` when the process is
 * created, `finish` when it ends (with what to sign). Published as
 * `jobs.fiscal.<project>.<processId>.<step>` with Nats-Msg-Id `fiscal:<project>:<processId>:<step>`.
 * A job whose step is recorded does nothing; a finish whose start is not recorded starts first.
 */
export const FiscalSteps = ['start', 'finish'] as const;
export type FiscalStep = (typeof FiscalSteps)[number];

export const FiscalJob = z
  .object({
    project: ProjectId,
    processID: z.string().min(1).max(200).describe('The checkout process (also the order) whose transaction this is'),
    shopID: z.string().describe('The cash register (TSE client) of the sale'),
    step: z.enum(FiscalSteps),
    processType: z.string().optional().describe('finish: Kassenbeleg-V1'),
    processData: z.string().optional().describe('finish: Beleg^... or AVBelegabbruch^...'),
    unsignable: z.string().optional().describe('finish: why the sale cannot be described to a TSE (recorded as not signed)'),
    final: z.boolean().optional().describe('finish: the order is final (with RECEIPTS_AHEAD its receipt job follows the signature)'),
  })
  .meta({ id: 'FiscalJob' });
export type FiscalJob = z.infer<typeof FiscalJob>;

export const FiscalJobFilter = jobFilter('fiscal');

/** The outbox row (subject, payload, Nats-Msg-Id) of a fiscal job. */
export function fiscalJob(payload: FiscalJob): { subject: string; payload: FiscalJob; msgId: string } {
  return {
    subject: jobSubject('fiscal', payload.project, subjectToken(payload.processID), payload.step),
    payload,
    msgId: `fiscal:${payload.project}:${payload.processID}:${payload.step}`,
  };
}

/** What a retailer registers with the tax office (§ 146a AO): the TSE and the cash registers (one per shop). */
export const FiscalRegisters = z
  .object({
    provider: z.enum(FiscalProviders).nullable().describe('The provider in force (null: none chosen, in production)'),
    reason: z.string().optional().describe('provider none: why'),
    tse: z
      .object({
        provider: z.enum(FiscalProviders),
        serialNumber: z.string(),
        signatureAlgorithm: z.string(),
        logTimeFormat: z.string(),
        publicKey: z.string(),
        certified: z.boolean().describe('false for the local signer: it must not be registered as a TSE'),
      })
      .nullable()
      .describe('null until the TSE signed once (fiskaly) or for provider none'),
    cashRegisters: z.array(
      z.object({
        serialNumber: z.string().describe('The shop id: the TSE client serial and DSFinV-K Z_KASSE_ID'),
        shopID: z.string(),
        name: z.string(),
        address: z.object({ street: z.string(), zip: z.string(), city: z.string(), country: z.string() }),
      }),
    ),
  })
  .meta({ id: 'FiscalRegisters' });
export type FiscalRegisters = z.infer<typeof FiscalRegisters>;

export const fiscal = {
  registers: endpoint('svc.fiscal.registers', z.object({ project: ProjectId }), FiscalRegisters, { repeatable: true }),
};
