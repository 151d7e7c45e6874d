/** What the closing screens call the log formats, and how they point at one closing. */
export interface ClosingRef {
  shopID: string;
  sequenceNumber: number;
}

export const FormatNames: Record<string, string> = { dsfinvk_2023_03: 'DSFinV-K', aggregated_receipts: 'Belege (CSV)', batch_aggregated_receipts: 'Belege laufend (CSV)' };
