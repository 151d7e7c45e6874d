import { useLanguage, type Language } from '../../i18n.js';
import { named } from '../../names.js';

/** What the closing screens call the log formats, and how they point at one closing. */
export interface ClosingRef {
  shopID: string;
  sequenceNumber: number;
}

const FormatNames: Record<Language, Record<string, string>> = {
  de: { dsfinvk_2023_03: 'DSFinV-K', aggregated_receipts: 'Belege (CSV)', batch_aggregated_receipts: 'Belege laufend (CSV)' },
  en: { dsfinvk_2023_03: 'DSFinV-K', aggregated_receipts: 'Receipts (CSV)', batch_aggregated_receipts: 'Receipts so far (CSV)' },
};

/** A log format's name in the chosen language (a format the portal does not know: as given). */
export function useFormatName(): (format: string) => string {
  const names = FormatNames[useLanguage()];
  return (format) => named(names, format);
}
