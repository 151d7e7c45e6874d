import { FiscalProcessTypes, type FiscalProvider, type FiscalReference, type SecurityDeviceModule } from '../../../subjects/fiscal.js';
import { dfkaTime, fiscalTransaction } from '../fiscal/reference.js';
import type { Value } from './csv.js';

/**
 * The TSE tables of a DSFinV-K export, from the orders' fiscal references. Pure.
 *
 * - transactions_tse (TSE_Transaktionen): one row per Beleg. TSE_ID names the TSE's row in
 *   tse.csv; TSE_TANR, the start and finish log times (ISO 8601 UTC with milliseconds, as the DFKA
 *   QR code writes them), TSE_TA_VORGANGSART (the finish's processType), TSE_TA_SIGZ and TSE_TA_SIG
 *   (the finish's signature counter and signature, base64) and TSE_VORGANGSDATEN (the processData
 *   signed) are what the TSE answered. On an outage the finish signed nothing: counter, signature
 *   and end stay empty and TSE_TA_FEHLER carries the failure (`TSE-Ausfall: <reason>`), which is
 *   how the standard records a failed TSE.
 * - Without a fiscal reference there is no TSE data: TSE_ID and the signature columns stay empty
 *   and TSE_TA_FEHLER says why: for provider `none`, with the reason the project gave (the one
 *   place of the standard's tables for it; A200, so a longer reason is cut).
 * - tse (Stamm_TSE): each TSE that signed a Beleg of the closing, numbered 1, 2, ... in the order
 *   of first use. The certificate is written as its base64 (PEM without armour and line breaks,
 *   which a CSV field cannot keep), its first 1000 characters in TSE_ZERTIFIKAT_I and the next
 *   1000 in TSE_ZERTIFIKAT_II, as the standard splits it.
 */

/**
 * How the project fiscalizes (its settings), as the export is given it: with provider `none`, the
 * reason the project gave is written where orders have no TSE data. Absent: as before
 * fiscalization existed.
 */
export interface Fiscalization {
  provider: FiscalProvider;
  reason?: string;
}

const NoTse = 'Keine TSE im Einsatz: Selbstbedienungskasse (Self-Checkout) ohne technische Sicherheitseinrichtung';
const NoTseData = 'Keine TSE-Daten zu diesem Vorgang: die TSE-Transaktion wurde nicht abgeschlossen';
/** The process data's encoding: what the platform hands its TSEs. */
const ProcessDataEncoding = 'UTF-8';
const CertificatePart = 1000;

export interface TseRows {
  /** The values of a transactions_tse row after BON_ID. */
  transaction(reference: FiscalReference | undefined): Value[];
  /** The rows of tse.csv after the closing's key: each TSE used so far. */
  devices(): Value[][];
}

export function createTseRows(fiscalization?: Fiscalization): TseRows {
  const devices = new Map<string, { id: number; module: SecurityDeviceModule }>();
  const missing = missingText(fiscalization);
  return {
    transaction(reference) {
      if (!reference) return [null, null, '', '', FiscalProcessTypes.receipt, null, '', missing, ''];
      const module = reference.securityDeviceModule;
      let device = devices.get(module.serialNumber);
      if (!device) {
        device = { id: devices.size + 1, module };
        devices.set(module.serialNumber, device);
      }
      const tx = fiscalTransaction(reference);
      const started = !tx.start.error;
      const processType = tx.finish.processType || FiscalProcessTypes.receipt;
      if (tx.outage) {
        return [
          device.id, started ? reference.transactionNumber : null, started ? dfkaTime(tx.startedAt, tx.start.timestamp) : '', '', processType,
          null, '', tx.outage, tx.finish.processData,
        ];
      }
      return [
        device.id, reference.transactionNumber, dfkaTime(tx.startedAt, tx.start.timestamp), dfkaTime(tx.finishedAt, tx.finish.timestamp), processType,
        tx.finish.counter, tx.finish.signature ?? '', '', tx.finish.processData,
      ];
    },
    devices() {
      return [...devices.values()].map(({ id, module }) => {
        const certificate = certificateBase64(module.certificate);
        return [
          id, module.serialNumber, module.signatureAlgorithm, module.logTimeFormat, ProcessDataEncoding, module.publicKey,
          certificate.slice(0, CertificatePart), certificate.slice(CertificatePart, 2 * CertificatePart),
        ];
      });
    },
  };
}

/** What TSE_TA_FEHLER says for a Beleg without TSE data. */
function missingText(fiscalization: Fiscalization | undefined): string {
  if (!fiscalization) return NoTse;
  if (fiscalization.provider === 'none') {
    const reason = fiscalization.reason?.replace(/\s+/g, ' ').trim();
    return reason ? `Keine TSE im Einsatz (Fiskalisierung: none): ${reason}` : NoTse;
  }
  // A TSE is configured, yet this order carries nothing it signed (the TSE job had not ended).
  return NoTseData;
}

/** The certificate's base64: a PEM's body without its armour and line breaks; other text as it is, without breaks. */
export function certificateBase64(certificate: string): string {
  return certificate.replace(/-----(?:BEGIN|END)[^-]*-----/g, '').replace(/\s+/g, '');
}
