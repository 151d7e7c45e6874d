import { z } from 'zod';

/**
 * What the fiskaly provider sends to and reads from fiskaly SIGN DE API v2, and how a TSE
 * processData becomes a `standard_v1` receipt. Pure: no I/O.
 *
 * The shapes come from fiskaly's OpenAPI document "fiskaly SIGN DE API" version 2.1.35, as kept in
 * the public repository i7aket/Vectis.Fiskaly.SDK at
 * `src/Vectis.Fiskaly.SDK/Documentation/official-documentation/fiskaly-openapi-sign-de-spec-v2.1.35.json`
 * (components.schemas AuthenticationResponse, RetrieveTssResponse, TxResponse,
 * ProcessDataStandardV1Receipt; paths /api/v2/auth, /api/v2/tss/{tss_id}/admin/auth,
 * /api/v2/tss/{tss_id}/client/{client_id}, /api/v2/tss/{tss_id}/tx/{tx_id_or_number}), checked
 * against uala/fiskaly-ruby `lib/fiskaly_ruby/kassen_sich_v/tss/tx/upsert.rb` and
 * `.../tss/client/create.rb`. Only the fields the platform uses are parsed; fiskaly may add more.
 */

/** POST /auth → AuthenticationResponse: only `access_token` is required; the expiry comes as either field. */
export const AuthAnswer = z.object({
  access_token: z.string().min(1),
  access_token_expires_in: z.number().int().nonnegative().optional(),
  access_token_expires_at: z.number().int().nonnegative().optional(),
});
export type AuthAnswer = z.infer<typeof AuthAnswer>;

/** GET /tss/{tss_id} → RetrieveTssResponse (certificate and public key base64, serial as fiskaly reports it). */
export const TssAnswer = z.object({
  serial_number: z.string().min(1),
  public_key: z.string().min(1),
  certificate: z.string().min(1),
  signature_algorithm: z.string().min(1),
  signature_timestamp_format: z.string().min(1),
});
export type TssAnswer = z.infer<typeof TssAnswer>;

/**
 * The OpenAPI types `signature.counter` as a bigint string, yet its "Known issues" section says the
 * middleware answers a number for now and will answer a string later: accept both.
 */
const Counter = z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,15}$/).transform(Number)]);

/** PUT or GET /tss/{tss_id}/tx/{tx_id}?tx_revision=n → TxResponse. */
export const TxAnswer = z.object({
  _id: z.string(),
  state: z.enum(['ACTIVE', 'FINISHED', 'CANCELLED']),
  client_id: z.string(),
  revision: z.number().int().positive(),
  number: z.number().int().nonnegative(),
  time_start: z.number().int().nonnegative(),
  time_end: z.number().int().nonnegative().optional(),
  client_serial_number: z.string(),
  tss_serial_number: z.string(),
  qr_code_data: z.string().optional(),
  log: z.object({ operation: z.string(), timestamp: z.number().int().nonnegative(), timestamp_format: z.string() }),
  signature: z.object({ value: z.string().min(1), algorithm: z.string(), counter: Counter, public_key: z.string() }),
});
export type TxAnswer = z.infer<typeof TxAnswer>;

/** fiskaly's error body: `{status_code, error, code, message}` (section "Errors and Status Codes"). */
export const ErrorAnswer = z.object({ code: z.string().optional(), message: z.string().optional(), error: z.string().optional() });

export const VatRates = ['NORMAL', 'REDUCED_1', 'SPECIAL_RATE_1', 'SPECIAL_RATE_2', 'NULL'] as const;
export type VatRate = (typeof VatRates)[number];

/** DSFinV-K payment names in processData → fiskaly's `payment_type` (ZAHLART_TYP). */
const PaymentTypes = { Bar: 'CASH', Unbar: 'NON_CASH' } as const;

/**
 * The first field of a Kassenbeleg-V1 processData (DSFinV-K BON_TYP) → fiskaly's `receipt_type`,
 * as the OpenAPI's description of `receipt_type` lists them.
 */
const ReceiptTypes = {
  Beleg: 'RECEIPT',
  AVTraining: 'TRAINING',
  AVTransfer: 'TRANSFER',
  AVBestellung: 'ORDER',
  // fiskaly documents both CANCELLATION and ABORT as AVBelegabbruch. ABORT names the act (an
  // aborted receipt, "Abbruch"); CANCELLATION reads like a Storno, which fiskaly calls ANNULATION.
  AVBelegabbruch: 'ABORT',
  AVSachbezug: 'BENEFIT_IN_KIND',
  AVRechnung: 'INVOICE',
  AVSonstige: 'OTHER',
  AVBelegstorno: 'ANNULATION',
} as const;

export interface StandardV1Receipt {
  receipt_type: (typeof ReceiptTypes)[keyof typeof ReceiptTypes];
  amounts_per_vat_rate: Array<{ vat_rate: VatRate; amount: string }>;
  amounts_per_payment_type?: Array<{ payment_type: 'CASH' | 'NON_CASH'; amount: string; currency_code?: string }>;
}

export interface FinishBody {
  /**
   * FINISHED for every receipt but the abort. An aborted or failed checkout is what the upsert
   * operation's description calls "something went wrong and you want to cancel the transaction,
   * set the state to CANCELLED", and E_TX_LIMIT_REACHED's text says a cancelled transaction still
   * carries "all the required schema fields": so CANCELLED, with the ABORT receipt.
   */
  state: 'FINISHED' | 'CANCELLED';
  receipt: StandardV1Receipt;
}

/** Decimal text with 1 to 5 decimals, or none; fiskaly wants at least 2 ("^-?\d+(\.\d{2,5})$"). */
const AmountText = /^-?\d+(\.\d{1,5})?$/;

function fiskalyAmount(text: string): string | undefined {
  if (!AmountText.test(text)) return undefined;
  const [whole, decimals = ''] = text.split('.');
  return `${whole}.${decimals.padEnd(2, '0')}`;
}

/**
 * `Beleg^<gross A>_<B>_<C>_<D>_<E>^<amount>:Bar[:<currency>]_<amount>:Unbar...` (DSFinV-K annex,
 * the DFKA taxonomy) → the receipt fiskaly builds the same processData from. Payments are joined
 * with `_` in DSFinV-K; `|` is accepted too, as the platform's own notes write it. An error, with
 * the reason, when the text is not such a processData.
 */
export function receiptOf(processData: string): { body: FinishBody } | { error: string } {
  const parts = processData.split('^');
  if (parts.length !== 3) return { error: 'processData has not the three parts type^vat^payments' };
  const [type = '', vat = '', payments = ''] = parts;
  const receiptType = Object.hasOwn(ReceiptTypes, type) ? ReceiptTypes[type as keyof typeof ReceiptTypes] : undefined;
  if (!receiptType) return { error: `processData type ${JSON.stringify(type.slice(0, 40))} is not a DSFinV-K receipt type` };

  const grosses = vat.split('_');
  if (grosses.length !== VatRates.length) return { error: 'processData has not five gross amounts (VAT rates A to E)' };
  const amountsPerVatRate: StandardV1Receipt['amounts_per_vat_rate'] = [];
  for (const [i, gross] of grosses.entries()) {
    const amount = fiskalyAmount(gross);
    if (amount === undefined) return { error: `processData gross amount ${i + 1} is not a decimal` };
    // All five, zeros included: the processData fiskaly signs lists all five, so ours and fiskaly's agree.
    amountsPerVatRate.push({ vat_rate: VatRates[i]!, amount });
  }

  const amountsPerPaymentType: NonNullable<StandardV1Receipt['amounts_per_payment_type']> = [];
  for (const payment of payments ? payments.split(/[_|]/) : []) {
    const [amountText = '', name = '', currency] = payment.split(':');
    const amount = fiskalyAmount(amountText);
    const paymentType = Object.hasOwn(PaymentTypes, name) ? PaymentTypes[name as keyof typeof PaymentTypes] : undefined;
    if (amount === undefined || !paymentType) return { error: `processData payment ${JSON.stringify(payment.slice(0, 40))} is not <amount>:Bar or <amount>:Unbar` };
    if (currency !== undefined && !/^[A-Za-z]{3}$/.test(currency)) return { error: 'processData payment currency is not an ISO 4217 code' };
    amountsPerPaymentType.push({ payment_type: paymentType, amount, ...(currency ? { currency_code: currency.toUpperCase() } : {}) });
  }

  return {
    body: {
      state: receiptType === 'ABORT' ? 'CANCELLED' : 'FINISHED',
      receipt: {
        receipt_type: receiptType,
        amounts_per_vat_rate: amountsPerVatRate,
        // Optional in the schema; an abort without payments sends none rather than an empty list.
        ...(amountsPerPaymentType.length ? { amounts_per_payment_type: amountsPerPaymentType } : {}),
      },
    },
  };
}

/**
 * processType and processData as fiskaly signed them, read from the DFKA QR code data it answers
 * (`V0;<client serial>;<processType>;<processData>;<tx number>;<counter>;<start>;<end>;...`).
 */
export function signedProcessOf(qrCodeData: string | undefined): { processType: string; processData: string } | undefined {
  const fields = qrCodeData?.split(';');
  if (!fields || fields.length < 12 || fields[0] !== 'V0') return undefined;
  return { processType: fields[2] ?? '', processData: fields[3] ?? '' };
}

/** fiskaly's certificate is base64: of PEM text, or of DER. The platform keeps PEM. */
export function pemOf(certificate: string): string {
  const decoded = Buffer.from(certificate, 'base64').toString('latin1');
  if (decoded.startsWith('-----BEGIN')) return decoded;
  const lines = certificate.replace(/\s+/g, '').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
