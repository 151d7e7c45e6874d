import { formatAmount } from '../../../subjects/formats/money.js';
import { orderRates } from '../closings/order-rates.js';
import type { ClosingOrder } from '../closings/totals.js';

/**
 * The `aggregated_receipts` log of a closing: one CSV row per order (RFC 4180: `,` between fields,
 * CRLF, a header row, `"` around text that needs it), amounts as decimal text in the currency unit
 * (`12.34`). Per tax rate of the closing, three columns: net, tax and gross. Orders that are not
 * final (listed with includeAllStates) paid nothing: their amounts are 0.
 */
export interface ReceiptOrder extends ClosingOrder {
  id: string;
  sequenceNumber: number;
  finalizedAt: string;
}

export interface AggregatedReceiptsWriter {
  header: string;
  row(order: ReceiptOrder): string;
}

function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** `rates`: the closing's tax rates as orders write them ("19", "7"), in column order. */
export function createAggregatedReceiptsWriter(rates: readonly string[], currency: string): AggregatedReceiptsWriter {
  const amount = (units: number) => formatAmount(units, currency);
  const rateColumns = rates.flatMap((rate) => [`net_${rate}`, `tax_${rate}`, `gross_${rate}`]);
  const header = ['sequenceNumber', 'orderID', 'finalizedAt', 'state', 'paymentMethod', 'currency', 'total', ...rateColumns].map(field).join(',') + '\r\n';
  return {
    header,
    row(order) {
      const final = order.state === 'final';
      const figures = new Map(final ? orderRates(order).map((f) => [f.rate, f]) : []);
      const perRate = rates.flatMap((rate) => {
        const f = figures.get(rate);
        return f ? [amount(f.net), amount(f.tax), amount(f.gross)] : [amount(0), amount(0), amount(0)];
      });
      return [
        String(order.sequenceNumber), field(order.id), order.finalizedAt, field(order.state), field(order.paymentMethod), currency,
        amount(final ? order.paidAmount : 0), ...perRate,
      ].join(',') + '\r\n';
    },
  };
}

/**
 * The `aggregated_receipts` batch log of a coming closing: CSV rows appended batch by batch, so
 * its columns cannot depend on the rates the day will have. One row per order and tax rate (an
 * order with no rate, or not final, has one row with an empty rate and amounts 0): `batchAt`
 * (the batch that appended it), the order's columns as in the closing's log (`total` on each of
 * its rows: count it once per orderID), then `rate, net, tax, gross`.
 */
export interface AggregatedReceiptsBatchWriter {
  header: string;
  rows(order: ReceiptOrder, batchAt: string): string;
}

export function createAggregatedReceiptsBatchWriter(currency: string): AggregatedReceiptsBatchWriter {
  const amount = (units: number) => formatAmount(units, currency);
  const header = ['batchAt', 'sequenceNumber', 'orderID', 'finalizedAt', 'state', 'paymentMethod', 'currency', 'total', 'rate', 'net', 'tax', 'gross'].join(',') + '\r\n';
  return {
    header,
    rows(order, batchAt) {
      const final = order.state === 'final';
      const head = [batchAt, String(order.sequenceNumber), field(order.id), order.finalizedAt, field(order.state), field(order.paymentMethod), currency, amount(final ? order.paidAmount : 0)];
      const rates = final ? orderRates(order) : [];
      const perRate = rates.length ? rates.map((f) => [field(f.rate), amount(f.net), amount(f.tax), amount(f.gross)]) : [['', amount(0), amount(0), amount(0)]];
      return perRate.map((r) => [...head, ...r].join(',') + '\r\n').join('');
    },
  };
}
