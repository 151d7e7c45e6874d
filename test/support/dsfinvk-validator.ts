import { unzipSync } from 'fflate';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { cents, checkSums, units, type ClosingTotals, type Row } from './dsfinvk-sums.js';

export { cents, units, type ClosingTotals, type Row };

/**
 * What an auditor's checker verifies in a DSFinV-K export (the list at the end of
 * shared/reference/dsfinvk.md), written from the reference, not from the writer's own table
 * definitions: the zip holds index.xml, its DTD and the 20 declared files; index.xml declares each
 * table as the standard names it; every file has exactly its declared header, field count, text
 * lengths and number formats; the keys hold; and the sums between the modules agree with each
 * other and with the closing's own totals (dsfinvk-sums.ts); and the TSE tables hold together
 * (checkTse). Answers the problems found (none for a good export) and the parsed tables.
 */

/** The standard's files and table names (reference: "Files"), and how many columns each has. */
export const ReferenceFiles: Record<string, { table: string; columns: number }> = {
  'cashpointclosing.csv': { table: 'Stamm_Abschluss', columns: 16 },
  'location.csv': { table: 'Stamm_Orte', columns: 9 },
  'cashregister.csv': { table: 'Stamm_Kassen', columns: 10 },
  'slaves.csv': { table: 'Stamm_Terminals', columns: 9 },
  'pa.csv': { table: 'Stamm_Agenturen', columns: 11 },
  'tse.csv': { table: 'Stamm_TSE', columns: 11 },
  'vat.csv': { table: 'Stamm_USt', columns: 6 },
  'businesscases.csv': { table: 'Z_GV_Typ', columns: 10 },
  'payment.csv': { table: 'Z_Zahlart', columns: 6 },
  'cash_per_currency.csv': { table: 'Z_Waehrungen', columns: 5 },
  'transactions.csv': { table: 'Bonkopf', columns: 23 },
  'transactions_vat.csv': { table: 'Bonkopf_USt', columns: 8 },
  'allocation_groups.csv': { table: 'Bonkopf_AbrKreis', columns: 5 },
  'datapayment.csv': { table: 'Bonkopf_Zahlarten', columns: 9 },
  'references.csv': { table: 'Bon_Referenzen', columns: 11 },
  'transactions_tse.csv': { table: 'TSE_Transaktionen', columns: 13 },
  'lines.csv': { table: 'Bonpos', columns: 21 },
  'lines_vat.csv': { table: 'Bonpos_USt', columns: 9 },
  'itemamounts.csv': { table: 'Bonpos_Preisfindung', columns: 10 },
  'subitems.csv': { table: 'Bonpos_Zusatzinfo', columns: 17 },
};

/** Columns the reference spells out, in order (after Z_KASSE_ID, Z_ERSTELLUNG, Z_NR), with their types. */
const ReferenceColumns: Record<string, string> = {
  'cashpointclosing.csv': 'Z_BUCHUNGSTAG:A25 TAXONOMIE_VERSION:A10 Z_START_ID:A40 Z_ENDE_ID:A40 NAME:A60 STRASSE:A60 PLZ:A10 ORT:A62 LAND:A3 STNR:A20 USTID:A15 Z_SE_ZAHLUNGEN:N2 Z_SE_BARZAHLUNGEN:N2',
  'location.csv': 'LOC_NAME:A60 LOC_STRASSE:A60 LOC_PLZ:A10 LOC_ORT:A62 LOC_LAND:A3 LOC_USTID:A15',
  'cashregister.csv': 'KASSE_BRAND:A50 KASSE_MODELL:A50 KASSE_SERIENNR:A70 KASSE_SW_BRAND:A50 KASSE_SW_VERSION:A50 KASSE_BASISWAEH_CODE:A3 KEINE_UST_ZUORDNUNG:A1',
  'tse.csv': 'TSE_ID:N TSE_SERIAL:A68 TSE_SIG_ALGO:A21 TSE_ZEITFORMAT:A31 TSE_PD_ENCODING:A5 TSE_PUBLIC_KEY:A512 TSE_ZERTIFIKAT_I:A1000 TSE_ZERTIFIKAT_II:A1000',
  'vat.csv': 'UST_SCHLUESSEL:N UST_SATZ:N2 UST_BESCHR:A55',
  'businesscases.csv': 'GV_TYP:A30 GV_NAME:A40 AGENTUR_ID:N UST_SCHLUESSEL:N Z_UMS_BRUTTO:N5 Z_UMS_NETTO:N5 Z_UST:N5',
  'payment.csv': 'ZAHLART_TYP:A25 ZAHLART_NAME:A60 Z_ZAHLART_BETRAG:N2',
  'cash_per_currency.csv': 'ZAHLART_WAEH:A3 ZAHLART_BETRAG_WAEH:N2',
  'transactions.csv':
    'BON_ID:A40 BON_NR:N BON_TYP:A30 BON_NAME:A60 TERMINAL_ID:A50 BON_STORNO:A1 BON_START:A30 BON_ENDE:A30 BEDIENER_ID:A50 BEDIENER_NAME:A50 UMS_BRUTTO:N2 KUNDE_NAME:A50 KUNDE_ID:A50 KUNDE_TYP:A50 KUNDE_STRASSE:A60 KUNDE_PLZ:A10 KUNDE_ORT:A62 KUNDE_LAND:A3 KUNDE_USTID:A15 BON_NOTIZ:A255',
  'transactions_vat.csv': 'BON_ID:A40 UST_SCHLUESSEL:N BON_BRUTTO:N5 BON_NETTO:N5 BON_UST:N5',
  'datapayment.csv': 'BON_ID:A40 ZAHLART_TYP:A25 ZAHLART_NAME:A60 ZAHLWAEH_CODE:A3 ZAHLWAEH_BETRAG:N2 BASISWAEH_BETRAG:N2',
  'lines.csv':
    'BON_ID:A40 POS_ZEILE:A50 GUTSCHEIN_NR:A50 ARTIKELTEXT:A255 POS_TERMINAL_ID:A50 GV_TYP:A30 GV_NAME:A40 INHAUS:A1 P_STORNO:A1 AGENTUR_ID:N ART_NR:A50 GTIN:A50 WARENGR_ID:A40 WARENGR:A50 MENGE:N3 FAKTOR:N3 EINHEIT:A50 STK_BR:N5',
  'lines_vat.csv': 'BON_ID:A40 POS_ZEILE:A50 UST_SCHLUESSEL:N POS_BRUTTO:N5 POS_NETTO:N5 POS_UST:N5',
  'transactions_tse.csv':
    'BON_ID:A40 TSE_ID:N TSE_TANR:N TSE_TA_START:A30 TSE_TA_ENDE:A30 TSE_TA_VORGANGSART:A30 TSE_TA_SIGZ:N TSE_TA_SIG:A512 TSE_TA_FEHLER:A200 TSE_VORGANGSDATEN:A1000',
};

const BusinessCaseTypes = new Set([
  'Anfangsbestand', 'Umsatz', 'Pfand', 'PfandRueckzahlung', 'MehrzweckgutscheinKauf', 'MehrzweckgutscheinEinloesung', 'EinzweckgutscheinKauf',
  'EinzweckgutscheinEinloesung', 'Forderungsentstehung', 'Forderungsaufloesung', 'Anzahlungseinstellung', 'Anzahlungsaufloesung', 'Preisnachlass',
  'Rabatt', 'Aufschlag', 'ZuschussEcht', 'ZuschussUnecht', 'TrinkgeldAG', 'TrinkgeldAN', 'EinzahlungNeutral', 'AuszahlungNeutral', 'Geldtransit',
  'Lohnzahlung', 'Privateinlage', 'Privatentnahme', 'Kassendifferenz', 'DifferenzSollIst', 'TrinkgeldAG', 'Wechselgeld',
]);
const PaymentTypes = new Set(['Bar', 'Unbar', 'Keine', 'ECKarte', 'Kreditkarte', 'ElZahlungsdienstleister', 'GuthabenKarte']);
const ReceiptTypes = new Set(['Beleg', 'AVTransfer', 'AVBestellung', 'AVTraining', 'AVBelegstorno', 'AVBelegabbruch', 'AVSachbezug', 'AVSonstige', 'AVRechnung']);
const IsoTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:Z|[+-]\d{2}:\d{2})?$/;

interface DeclaredColumn {
  name: string;
  numeric: boolean;
  accuracy: number;
  maxLength: number;
}

export interface Validation {
  problems: string[];
  tables: Record<string, Row[]>;
  files: string[];
}

/** Records of a CSV with `;`, CRLF and `"` (doubled inside): each a list of raw fields (quotes removed). */
export function parseCsv(text: string, problems: string[], file: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') {
      if (field !== '' || wasQuoted) problems.push(`${file}: a quote inside an unquoted field`);
      quoted = true;
      wasQuoted = true;
    } else if (c === ';') {
      fields.push(field);
      field = '';
      wasQuoted = false;
    } else if (c === '\r' && text[i + 1] === '\n') {
      fields.push(field);
      records.push(fields);
      fields = [];
      field = '';
      wasQuoted = false;
      i++;
    } else if (c === '\n' || c === '\r') {
      problems.push(`${file}: a line break that is not CRLF at ${i}`);
    } else field += c;
  }
  if (quoted) problems.push(`${file}: an open quote at the end`);
  if (field !== '' || fields.length) problems.push(`${file}: the last record does not end with CRLF`);
  return records;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export function validateDsfinvk(zip: Uint8Array, closing: ClosingTotals): Validation {
  const problems: string[] = [];
  const files = unzipSync(zip);
  const names = Object.keys(files);
  const text = (name: string) => new TextDecoder('utf-8', { fatal: true }).decode(files[name]);

  // index.xml and its DTD.
  if (!files['index.xml']) return { problems: ['no index.xml'], tables: {}, files: names };
  const xml = text('index.xml');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) problems.push(`index.xml is not well-formed: ${JSON.stringify(valid)}`);
  // XML 1.0's Char production, which fast-xml-parser does not check (an XML parser refuses the document).
  const badChar = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u.exec(xml);
  if (badChar) problems.push(`index.xml is not well-formed: U+${badChar[0].codePointAt(0)!.toString(16).padStart(4, '0')} at ${badChar.index} is no XML character`);
  const dtd = /<!DOCTYPE DataSet SYSTEM "([^"]+)">/.exec(xml)?.[1];
  if (dtd !== 'gdpdu-01-09-2004.dtd') problems.push(`index.xml names the DTD ${dtd}`);
  if (!dtd || !files[dtd]) problems.push('the DTD index.xml names is not in the zip');
  else if (!text(dtd).includes('<!ELEMENT DataSet')) problems.push('the DTD declares no DataSet');
  const parsed = new XMLParser({ ignoreAttributes: false, parseTagValue: false, trimValues: false, htmlEntities: true, isArray: (name) => ['Table', 'VariableColumn'].includes(name) }).parse(xml);
  const dataSet = parsed.DataSet;
  if (dataSet?.Version !== '1.0') problems.push('DataSet Version is not 1.0');
  if (!dataSet?.DataSupplier) problems.push('no DataSupplier');
  const tables = asArray(dataSet?.Media?.Table) as any[];
  const declared = new Map<string, { name: string; columns: DeclaredColumn[] }>();
  for (const table of tables) {
    const url = String(table.URL);
    const v = table.VariableLength ?? {};
    if (!('UTF8' in table)) problems.push(`${url}: not declared UTF8`);
    if (table.DecimalSymbol !== ',') problems.push(`${url}: DecimalSymbol ${table.DecimalSymbol}`);
    if (!('DigitGroupingSymbol' in table)) problems.push(`${url}: no DigitGroupingSymbol`);
    if (String(table.Range?.From) !== '2') problems.push(`${url}: data does not start at record 2`);
    if (v.ColumnDelimiter !== ';') problems.push(`${url}: ColumnDelimiter ${v.ColumnDelimiter}`);
    if (v.RecordDelimiter !== '\r\n') problems.push(`${url}: RecordDelimiter ${JSON.stringify(v.RecordDelimiter)}`);
    if (v.TextEncapsulator !== '"') problems.push(`${url}: TextEncapsulator ${v.TextEncapsulator}`);
    if (!table.Description) problems.push(`${url}: no Description`);
    const columns: DeclaredColumn[] = asArray(v.VariableColumn).map((c: any) => {
      const numeric = 'Numeric' in c;
      if (!numeric && !('AlphaNumeric' in c)) problems.push(`${url}.${c.Name}: neither Numeric nor AlphaNumeric`);
      if (!numeric && !c.MaxLength) problems.push(`${url}.${c.Name}: text without MaxLength`);
      return { name: String(c.Name), numeric, accuracy: Number(c.Numeric?.Accuracy ?? 0), maxLength: Number(c.MaxLength ?? 0) };
    });
    declared.set(url, { name: String(table.Name), columns });
  }

  // The declared files are the standard's 20, each with its table name and column count.
  for (const [file, ref] of Object.entries(ReferenceFiles)) {
    const d = declared.get(file);
    if (!d) {
      problems.push(`${file} is not declared in index.xml`);
      continue;
    }
    if (d.name !== ref.table) problems.push(`${file}: declared as ${d.name}, not ${ref.table}`);
    if (d.columns.length !== ref.columns) problems.push(`${file}: ${d.columns.length} columns declared, the standard has ${ref.columns}`);
    const expected = ['Z_KASSE_ID:A50', 'Z_ERSTELLUNG:A30', 'Z_NR:N', ...(ReferenceColumns[file]?.split(' ') ?? [])];
    if (ReferenceColumns[file]) {
      const actual = d.columns.map((c) => `${c.name}:${c.numeric ? `N${c.accuracy || ''}` : `A${c.maxLength}`}`);
      if (actual.join(' ') !== expected.join(' ')) problems.push(`${file}: columns ${actual.join(' ')} are not the standard's ${expected.join(' ')}`);
    } else if (d.columns.slice(0, 3).map((c) => c.name).join() !== 'Z_KASSE_ID,Z_ERSTELLUNG,Z_NR') problems.push(`${file}: does not start with the closing's key`);
  }
  for (const url of declared.keys()) if (!ReferenceFiles[url]) problems.push(`${url} is declared but is no file of the standard`);
  const totalColumns = [...declared.values()].reduce((n, d) => n + d.columns.length, 0);
  if (totalColumns !== 219) problems.push(`${totalColumns} columns in all, not 219`);
  for (const name of names) if (name !== 'index.xml' && name !== dtd && !declared.has(name)) problems.push(`${name} is in the zip but not declared`);

  // Every declared file: present, its header, its records.
  const rows: Record<string, Row[]> = {};
  for (const [file, { columns }] of declared) {
    if (!files[file]) {
      problems.push(`${file} is declared but missing`);
      continue;
    }
    let content: string;
    try {
      content = text(file);
    } catch {
      problems.push(`${file} is not UTF-8`);
      continue;
    }
    const records = parseCsv(content, problems, file);
    const header = content.slice(0, content.indexOf('\r\n'));
    if (header !== columns.map((c) => c.name).join(';')) problems.push(`${file}: header ${header} is not the declared one`);
    rows[file] = records.slice(1).map((fields, index) => {
      const at = `${file} record ${index + 2}`;
      if (fields.length !== columns.length) problems.push(`${at}: ${fields.length} fields, ${columns.length} declared`);
      const row: Row = {};
      columns.forEach((c, i) => {
        const value = fields[i] ?? '';
        row[c.name] = value;
        if (c.numeric) {
          const pattern = c.accuracy ? new RegExp(`^-?\\d+(?:,\\d{1,${c.accuracy}})?$`) : /^-?\d+$/;
          if (value !== '' && !pattern.test(value)) problems.push(`${at}: ${c.name} ${value} is no number with at most ${c.accuracy} decimals`);
        } else {
          if ([...value].length > c.maxLength) problems.push(`${at}: ${c.name} is longer than ${c.maxLength}`);
          if (/\p{Cc}/u.test(value)) problems.push(`${at}: ${c.name} holds a control character`);
        }
      });
      return row;
    });
  }
  const r = (file: string) => rows[file] ?? [];

  // The closing's key, byte-identical everywhere.
  const closingRow = r('cashpointclosing.csv')[0];
  const key = closingRow ? [closingRow.Z_KASSE_ID, closingRow.Z_ERSTELLUNG, closingRow.Z_NR].join('|') : '';
  for (const [file, list] of Object.entries(rows)) {
    for (const row of list) if ([row.Z_KASSE_ID, row.Z_ERSTELLUNG, row.Z_NR].join('|') !== key) problems.push(`${file}: a record of another closing (${row.Z_KASSE_ID}, ${row.Z_ERSTELLUNG}, ${row.Z_NR})`);
  }
  for (const file of ['cashpointclosing.csv', 'location.csv', 'cashregister.csv']) if (r(file).length !== 1) problems.push(`${file}: ${r(file).length} records, one expected`);
  if (!r('vat.csv').length) problems.push('vat.csv is empty');
  if (closingRow) {
    if (Number(closingRow.Z_NR) !== closing.sequenceNumber) problems.push(`Z_NR ${closingRow.Z_NR} is not the closing's number ${closing.sequenceNumber}`);
    if (!IsoTime.test(closingRow.Z_ERSTELLUNG!)) problems.push(`Z_ERSTELLUNG ${closingRow.Z_ERSTELLUNG} is no ISO 8601 time`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(closingRow.Z_BUCHUNGSTAG!)) problems.push(`Z_BUCHUNGSTAG ${closingRow.Z_BUCHUNGSTAG} is no date`);
    if (closingRow.TAXONOMIE_VERSION !== '2.3') problems.push(`TAXONOMIE_VERSION ${closingRow.TAXONOMIE_VERSION}`);
  }

  // Keys.
  const receipts = r('transactions.csv');
  const bonIds = new Set<string>();
  for (const t of receipts) {
    if (bonIds.has(t.BON_ID!)) problems.push(`BON_ID ${t.BON_ID} is not unique`);
    bonIds.add(t.BON_ID!);
    if (!ReceiptTypes.has(t.BON_TYP!)) problems.push(`BON_TYP ${t.BON_TYP}`);
    if (!t.BEDIENER_ID) problems.push(`BON_ID ${t.BON_ID}: no BEDIENER_ID`);
    if (!['0', '1'].includes(t.BON_STORNO!)) problems.push(`BON_STORNO ${t.BON_STORNO}`);
    for (const c of ['BON_START', 'BON_ENDE'] as const) if (!IsoTime.test(t[c]!)) problems.push(`BON_ID ${t.BON_ID}: ${c} ${t[c]} is no ISO 8601 time`);
  }
  if (closingRow) {
    if (closingRow.Z_START_ID !== (receipts[0]?.BON_ID ?? '')) problems.push(`Z_START_ID ${closingRow.Z_START_ID} is not the first BON_ID`);
    if (closingRow.Z_ENDE_ID !== (receipts.at(-1)?.BON_ID ?? '')) problems.push(`Z_ENDE_ID ${closingRow.Z_ENDE_ID} is not the last BON_ID`);
  }
  for (const file of ['transactions_vat.csv', 'datapayment.csv', 'lines.csv', 'lines_vat.csv', 'transactions_tse.csv', 'allocation_groups.csv', 'references.csv', 'itemamounts.csv', 'subitems.csv']) {
    for (const row of r(file)) if (!bonIds.has(row.BON_ID!)) problems.push(`${file}: BON_ID ${row.BON_ID} has no Bonkopf`);
  }
  const positions = new Map<string, Row>();
  for (const line of r('lines.csv')) {
    const k = `${line.BON_ID}|${line.POS_ZEILE}`;
    if (positions.has(k)) problems.push(`POS_ZEILE ${line.POS_ZEILE} is not unique in Beleg ${line.BON_ID}`);
    positions.set(k, line);
    if (!BusinessCaseTypes.has(line.GV_TYP!)) problems.push(`GV_TYP ${line.GV_TYP}`);
    for (const c of ['INHAUS', 'P_STORNO'] as const) if (!['0', '1'].includes(line[c]!)) problems.push(`${c} ${line[c]}`);
  }
  const vatKeys = new Map(r('vat.csv').map((v) => [v.UST_SCHLUESSEL!, units(v.UST_SATZ)]));
  for (const file of ['transactions_vat.csv', 'lines_vat.csv', 'businesscases.csv']) {
    for (const row of r(file)) if (!vatKeys.has(row.UST_SCHLUESSEL!)) problems.push(`${file}: UST_SCHLUESSEL ${row.UST_SCHLUESSEL} is not in vat.csv`);
  }
  for (const [file, prefix] of [['transactions_vat.csv', 'BON_'], ['lines_vat.csv', 'POS_'], ['businesscases.csv', 'Z_UMS_']] as const) {
    for (const row of r(file)) {
      const tax = file === 'businesscases.csv' ? row.Z_UST : row[`${prefix}UST`];
      if (units(row[`${prefix}BRUTTO`]) !== units(row[`${prefix}NETTO`]) + units(tax)) problems.push(`${file}: BRUTTO ≠ NETTO + UST in ${JSON.stringify(row)}`);
    }
  }
  for (const line of r('lines_vat.csv')) if (!positions.has(`${line.BON_ID}|${line.POS_ZEILE}`)) problems.push(`lines_vat.csv: position ${line.BON_ID}/${line.POS_ZEILE} is not in lines.csv`);
  for (const p of r('datapayment.csv')) if (!PaymentTypes.has(p.ZAHLART_TYP!)) problems.push(`ZAHLART_TYP ${p.ZAHLART_TYP}`);

  checkTse(rows, problems);
  checkSums(rows, closing, problems);
  return { problems, tables: rows, files: names };
}

/** BSI TR-03151's log time formats, as tse.csv names them. */
const TseTimeFormats = new Set(['unixTime', 'utcTime', 'utcTimeWithSeconds', 'generalizedTime', 'generalizedTimeWithMilliseconds']);
const Base64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The TSE tables: tse.csv lists each TSE once (TSE_ID its key) with what a checker needs to verify
 * its signatures; transactions_tse.csv has exactly one record per Bonkopf, whose TSE_ID is in
 * tse.csv, with the finish's signature data, or else a TSE_TA_FEHLER saying why there is none;
 * per TSE, transaction numbers and signature counters are never used twice.
 */
export function checkTse(rows: Record<string, Row[]>, problems: string[]): void {
  const devices = new Map<string, Row>();
  for (const d of rows['tse.csv'] ?? []) {
    const at = `tse.csv TSE_ID ${d.TSE_ID}`;
    if (!/^\d+$/.test(d.TSE_ID ?? '')) problems.push(`${at}: TSE_ID is no integer`);
    if (devices.has(d.TSE_ID!)) problems.push(`${at}: TSE_ID is not unique`);
    devices.set(d.TSE_ID!, d);
    if (!d.TSE_SERIAL) problems.push(`${at}: no TSE_SERIAL`);
    if (!d.TSE_SIG_ALGO) problems.push(`${at}: no TSE_SIG_ALGO`);
    if (!TseTimeFormats.has(d.TSE_ZEITFORMAT!)) problems.push(`${at}: TSE_ZEITFORMAT ${d.TSE_ZEITFORMAT}`);
    if (!['UTF-8', 'ASCII'].includes(d.TSE_PD_ENCODING!)) problems.push(`${at}: TSE_PD_ENCODING ${d.TSE_PD_ENCODING}`);
    if (!Base64.test(d.TSE_PUBLIC_KEY ?? '')) problems.push(`${at}: TSE_PUBLIC_KEY is no base64`);
    if (!d.TSE_ZERTIFIKAT_I) problems.push(`${at}: no TSE_ZERTIFIKAT_I`);
    if (d.TSE_ZERTIFIKAT_II && [...(d.TSE_ZERTIFIKAT_I ?? '')].length !== 1000) problems.push(`${at}: TSE_ZERTIFIKAT_II continues a TSE_ZERTIFIKAT_I that is not full`);
  }
  const serials = new Set<string>();
  for (const d of devices.values()) {
    if (serials.has(d.TSE_SERIAL!)) problems.push(`tse.csv: TSE_SERIAL ${d.TSE_SERIAL} listed twice`);
    serials.add(d.TSE_SERIAL!);
  }

  const perBon = new Map<string, number>();
  for (const r of rows['transactions_tse.csv'] ?? []) perBon.set(r.BON_ID!, (perBon.get(r.BON_ID!) ?? 0) + 1);
  for (const t of rows['transactions.csv'] ?? []) {
    const n = perBon.get(t.BON_ID!) ?? 0;
    if (n !== 1) problems.push(`BON_ID ${t.BON_ID}: ${n} records in transactions_tse.csv, one expected`);
  }

  const used = new Set<string>();
  const seen = new Set<string>();
  for (const r of rows['transactions_tse.csv'] ?? []) {
    const at = `transactions_tse.csv BON_ID ${r.BON_ID}`;
    if (!r.TSE_ID) {
      if (!r.TSE_TA_FEHLER) problems.push(`${at}: neither a TSE nor a TSE_TA_FEHLER saying why not`);
      if (r.TSE_TA_SIG || r.TSE_TA_SIGZ || r.TSE_TANR) problems.push(`${at}: signature data without a TSE`);
      continue;
    }
    if (!devices.has(r.TSE_ID)) problems.push(`${at}: TSE_ID ${r.TSE_ID} is not in tse.csv`);
    used.add(r.TSE_ID);
    if (r.TSE_TA_START && !IsoTime.test(r.TSE_TA_START)) problems.push(`${at}: TSE_TA_START ${r.TSE_TA_START} is no ISO 8601 time`);
    if (r.TSE_TA_ENDE && !IsoTime.test(r.TSE_TA_ENDE)) problems.push(`${at}: TSE_TA_ENDE ${r.TSE_TA_ENDE} is no ISO 8601 time`);
    if (r.TSE_TA_FEHLER) {
      if (r.TSE_TA_SIG) problems.push(`${at}: a signature beside a TSE failure`);
    } else {
      for (const c of ['TSE_TANR', 'TSE_TA_START', 'TSE_TA_ENDE', 'TSE_TA_VORGANGSART', 'TSE_TA_SIGZ', 'TSE_TA_SIG'] as const) if (!r[c]) problems.push(`${at}: no ${c}`);
      if (r.TSE_TA_SIG && !Base64.test(r.TSE_TA_SIG)) problems.push(`${at}: TSE_TA_SIG is no base64`);
      if (r.TSE_TA_START && r.TSE_TA_ENDE && Date.parse(r.TSE_TA_START) > Date.parse(r.TSE_TA_ENDE)) problems.push(`${at}: the transaction ends before it starts`);
    }
    for (const [c, what] of [['TSE_TANR', 'transaction number'], ['TSE_TA_SIGZ', 'signature counter']] as const) {
      if (!r[c]) continue;
      const k = `${c}|${r.TSE_ID}|${r[c]}`;
      if (seen.has(k)) problems.push(`${at}: ${what} ${r[c]} of TSE ${r.TSE_ID} used twice`);
      seen.add(k);
    }
  }
  for (const id of devices.keys()) if (!used.has(id)) problems.push(`tse.csv: TSE_ID ${id} signed no Beleg of the closing`);
}
