/**
 * The 20 tables of a DSFinV-K 2.3 export: file, table name (as index.xml names it), module, and
 * columns in the standard's order with their GDPdU types (`A50`: text of at most 50 characters,
 * `N`: integer, `N2`: number with 2 decimals). 219 columns in all.
 */
export type ColumnType = { kind: 'text'; maxLength: number } | { kind: 'number'; accuracy: number };

export interface Column {
  name: string;
  type: ColumnType;
  description: string;
}

export type Module = 'Stammdaten' | 'Kassenabschluss' | 'Einzelaufzeichnung';

export interface Table {
  file: string;
  name: string;
  module: Module;
  description: string;
  columns: readonly Column[];
}

const descriptions: Record<string, string> = {
  Z_KASSE_ID: 'ID der (Abschluss-) Kasse',
  Z_ERSTELLUNG: 'Zeitpunkt des Kassenabschlusses',
  Z_NR: 'Nr. des Kassenabschlusses',
  Z_BUCHUNGSTAG: 'Vom Erstellungsdatum abweichender Verbuchungstag',
  TAXONOMIE_VERSION: 'Version der DFKA-Taxonomie-Kasse',
  Z_START_ID: 'Erste BON_ID im Abschluss',
  Z_ENDE_ID: 'Letzte BON_ID im Abschluss',
  NAME: 'Name des Unternehmens',
  STRASSE: 'Straße',
  PLZ: 'Postleitzahl',
  ORT: 'Ort',
  LAND: 'Land',
  STNR: 'Steuernummer des Unternehmens',
  USTID: 'USt-IdNr. des Unternehmens',
  Z_SE_ZAHLUNGEN: 'Summe aller Zahlungen',
  Z_SE_BARZAHLUNGEN: 'Summe aller Barzahlungen',
  LOC_NAME: 'Name des Standortes',
  LOC_STRASSE: 'Straße',
  LOC_PLZ: 'Postleitzahl',
  LOC_ORT: 'Ort',
  LOC_LAND: 'Land',
  LOC_USTID: 'USt-IdNr.',
  KASSE_BRAND: 'Marke der Kasse',
  KASSE_MODELL: 'Modellbezeichnung',
  KASSE_SERIENNR: 'Seriennummer der Kasse',
  KASSE_SW_BRAND: 'Markenbezeichnung der Software',
  KASSE_SW_VERSION: 'Version der Software',
  KASSE_BASISWAEH_CODE: 'Basiswährung der Kasse',
  KEINE_UST_ZUORDNUNG: 'Umsatzsteuer nicht ermittelbar',
  TERMINAL_ID: 'ID des Terminals',
  TERMINAL_BRAND: 'Marke des Terminals',
  TERMINAL_MODELL: 'Modellbezeichnung des Terminals',
  TERMINAL_SERIENNR: 'Seriennummer des Terminals',
  TERMINAL_SW_BRAND: 'Markenbezeichnung der Software',
  TERMINAL_SW_VERSION: 'Version der Software',
  AGENTUR_ID: 'ID der Agentur',
  AGENTUR_NAME: 'Name des Auftraggebers',
  AGENTUR_STRASSE: 'Straße',
  AGENTUR_PLZ: 'Postleitzahl',
  AGENTUR_ORT: 'Ort',
  AGENTUR_LAND: 'Land',
  AGENTUR_STNR: 'Steuernummer des Auftraggebers',
  AGENTUR_USTID: 'USt-IdNr. des Auftraggebers',
  TSE_ID: 'ID der TSE',
  TSE_SERIAL: 'Seriennummer der TSE',
  TSE_SIG_ALGO: 'Signaturalgorithmus der TSE',
  TSE_ZEITFORMAT: 'Format der Log-Time der TSE',
  TSE_PD_ENCODING: 'Text-Encoding der ProcessData',
  TSE_PUBLIC_KEY: 'Öffentlicher Schlüssel der TSE',
  TSE_ZERTIFIKAT_I: 'Zertifikat der TSE, Teil 1',
  TSE_ZERTIFIKAT_II: 'Zertifikat der TSE, Teil 2',
  UST_SCHLUESSEL: 'ID des Umsatzsteuersatzes',
  UST_SATZ: 'Prozentsatz',
  UST_BESCHR: 'Beschreibung',
  GV_TYP: 'Typ der Geschäftsvorfall-Art',
  GV_NAME: 'Name der Geschäftsvorfall-Art',
  Z_UMS_BRUTTO: 'Bruttoumsatz',
  Z_UMS_NETTO: 'Nettoumsatz',
  Z_UST: 'Umsatzsteuer',
  ZAHLART_TYP: 'Typ der Zahlart',
  ZAHLART_NAME: 'Name der Zahlart',
  Z_ZAHLART_BETRAG: 'Betrag',
  ZAHLART_WAEH: 'Währung',
  ZAHLART_BETRAG_WAEH: 'Betrag',
  BON_ID: 'Vorgangs-ID',
  BON_NR: 'Bonnummer',
  BON_TYP: 'Bontyp',
  BON_NAME: 'Zusatz-Beschreibung zum Bontyp',
  BON_STORNO: 'Storno-Kennzeichen',
  BON_START: 'Zeitpunkt des Vorgangsstarts',
  BON_ENDE: 'Zeitpunkt der Vorgangsbeendigung',
  BEDIENER_ID: 'Bediener-ID',
  BEDIENER_NAME: 'Bediener-Name',
  UMS_BRUTTO: 'Brutto-Gesamtumsatz',
  KUNDE_NAME: 'Name des Leistungsempfängers',
  KUNDE_ID: 'Kundennummer des Leistungsempfängers',
  KUNDE_TYP: 'Art des Leistungsempfängers',
  KUNDE_STRASSE: 'Straße und Hausnummer des Leistungsempfängers',
  KUNDE_PLZ: 'PLZ des Leistungsempfängers',
  KUNDE_ORT: 'Ort des Leistungsempfängers',
  KUNDE_LAND: 'Land des Leistungsempfängers',
  KUNDE_USTID: 'USt-IdNr. des Leistungsempfängers',
  BON_NOTIZ: 'Zusätzliche Informationen zum Bonkopf',
  BON_BRUTTO: 'Bruttoumsatz',
  BON_NETTO: 'Nettoumsatz',
  BON_UST: 'Umsatzsteuer',
  ABRECHNUNGSKREIS: 'Abrechnungskreis, z. B. Tischnummer',
  ZAHLWAEH_CODE: 'Währungscode',
  ZAHLWAEH_BETRAG: 'Betrag in Fremdwährung',
  BASISWAEH_BETRAG: 'Betrag in Basiswährung',
  POS_ZEILE: 'Zeilennummer',
  REF_TYP: 'Art der Referenz',
  REF_NAME: 'Beschreibung bei Art ExterneSonstige',
  REF_DATUM: 'Datum des referenzierten Kassenabschlusses',
  REF_Z_KASSE_ID: 'ID der referenzierten (Abschluss-) Kasse',
  REF_Z_NR: 'Nr. des referenzierten Kassenabschlusses',
  REF_BON_ID: 'Referenzierte Vorgangs-ID',
  TSE_TANR: 'Transaktionsnummer der TSE-Transaktion',
  TSE_TA_START: 'Log-Time der StartTransaction-Operation',
  TSE_TA_ENDE: 'Log-Time der FinishTransaction-Operation',
  TSE_TA_VORGANGSART: 'processType der FinishTransaction-Operation',
  TSE_TA_SIGZ: 'Signaturzähler der FinishTransaction-Operation',
  TSE_TA_SIG: 'Signatur der FinishTransaction-Operation',
  TSE_TA_FEHLER: 'Beschreibung des TSE-Ausfalls oder Fehlers',
  TSE_VORGANGSDATEN: 'An die TSE übergebene Daten des Vorgangs',
  GUTSCHEIN_NR: 'Gutschein-Nr.',
  ARTIKELTEXT: 'Artikeltext',
  POS_TERMINAL_ID: 'ID des Positions-Terminals',
  INHAUS: 'Verzehr an Ort und Stelle',
  P_STORNO: 'Positionsstorno-Kennzeichnung',
  ART_NR: 'Artikelnummer',
  GTIN: 'GTIN',
  WARENGR_ID: 'Warengruppen-ID',
  WARENGR: 'Bezeichnung Warengruppe',
  MENGE: 'Menge',
  FAKTOR: 'Faktor, z. B. Gebindegrößen',
  EINHEIT: 'Maßeinheit, z. B. kg, Liter oder Stück',
  STK_BR: 'Preis pro Einheit inkl. USt',
  POS_BRUTTO: 'Bruttoumsatz',
  POS_NETTO: 'Nettoumsatz',
  POS_UST: 'Umsatzsteuer',
  TYP: 'Basispreis, Rabatt oder Zuschlag',
  PF_BRUTTO: 'Bruttoumsatz',
  PF_NETTO: 'Nettoumsatz',
  PF_UST: 'Umsatzsteuer',
  ZI_ART_NR: 'Artikelnummer',
  ZI_GTIN: 'GTIN',
  ZI_NAME: 'Artikelbezeichnung',
  ZI_WARENGR_ID: 'Warengruppen-ID',
  ZI_WARENGR: 'Bezeichnung Warengruppe',
  ZI_MENGE: 'Menge',
  ZI_FAKTOR: 'Faktor, z. B. Gebindegrößen',
  ZI_EINHEIT: 'Maßeinheit',
  ZI_UST_SCHLUESSEL: 'ID USt-Satz des Basispreises',
  ZI_BASISPREIS_BRUTTO: 'Basispreis brutto',
  ZI_BASISPREIS_NETTO: 'Basispreis netto',
  ZI_BASISPREIS_UST: 'Basispreis USt',
};

/** `NAME:A50` → a text column, `NAME:N2` → a number with 2 decimals, `NAME:N` → an integer. */
function column(spec: string): Column {
  const [name = '', type = ''] = spec.split(':');
  const match = /^(A|N)(\d*)$/.exec(type);
  if (!match) throw new Error(`bad column spec ${spec}`);
  const size = Number(match[2] || '0');
  return {
    name,
    type: match[1] === 'A' ? { kind: 'text', maxLength: size } : { kind: 'number', accuracy: size },
    description: descriptions[name] ?? name,
  };
}

/** Every file starts with the closing's key: register, closing time, closing number. */
const Key = ['Z_KASSE_ID:A50', 'Z_ERSTELLUNG:A30', 'Z_NR:N'];

function table(file: string, name: string, module: Module, description: string, columns: string): Table {
  return { file, name, module, description, columns: [...Key, ...columns.trim().split(/\s+/)].map(column) };
}

export const Tables = {
  cashpointclosing: table('cashpointclosing.csv', 'Stamm_Abschluss', 'Stammdaten', 'Stammdaten des Kassenabschlusses', `
    Z_BUCHUNGSTAG:A25 TAXONOMIE_VERSION:A10 Z_START_ID:A40 Z_ENDE_ID:A40 NAME:A60 STRASSE:A60 PLZ:A10 ORT:A62 LAND:A3
    STNR:A20 USTID:A15 Z_SE_ZAHLUNGEN:N2 Z_SE_BARZAHLUNGEN:N2`),
  location: table('location.csv', 'Stamm_Orte', 'Stammdaten', 'Standort der Kasse', `
    LOC_NAME:A60 LOC_STRASSE:A60 LOC_PLZ:A10 LOC_ORT:A62 LOC_LAND:A3 LOC_USTID:A15`),
  cashregister: table('cashregister.csv', 'Stamm_Kassen', 'Stammdaten', 'Stammdaten der Kasse', `
    KASSE_BRAND:A50 KASSE_MODELL:A50 KASSE_SERIENNR:A70 KASSE_SW_BRAND:A50 KASSE_SW_VERSION:A50 KASSE_BASISWAEH_CODE:A3
    KEINE_UST_ZUORDNUNG:A1`),
  slaves: table('slaves.csv', 'Stamm_Terminals', 'Stammdaten', 'Erfassungs-Terminals der Kasse', `
    TERMINAL_ID:A50 TERMINAL_BRAND:A50 TERMINAL_MODELL:A50 TERMINAL_SERIENNR:A70 TERMINAL_SW_BRAND:A50 TERMINAL_SW_VERSION:A50`),
  pa: table('pa.csv', 'Stamm_Agenturen', 'Stammdaten', 'Agenturen (Umsätze für Rechnung Dritter)', `
    AGENTUR_ID:N AGENTUR_NAME:A60 AGENTUR_STRASSE:A60 AGENTUR_PLZ:A10 AGENTUR_ORT:A62 AGENTUR_LAND:A3 AGENTUR_STNR:A20
    AGENTUR_USTID:A15`),
  tse: table('tse.csv', 'Stamm_TSE', 'Stammdaten', 'Technische Sicherheitseinrichtungen', `
    TSE_ID:N TSE_SERIAL:A68 TSE_SIG_ALGO:A21 TSE_ZEITFORMAT:A31 TSE_PD_ENCODING:A5 TSE_PUBLIC_KEY:A512
    TSE_ZERTIFIKAT_I:A1000 TSE_ZERTIFIKAT_II:A1000`),
  vat: table('vat.csv', 'Stamm_USt', 'Stammdaten', 'Umsatzsteuersätze', `UST_SCHLUESSEL:N UST_SATZ:N2 UST_BESCHR:A55`),
  businesscases: table('businesscases.csv', 'Z_GV_Typ', 'Kassenabschluss', 'Summen je Geschäftsvorfall-Art', `
    GV_TYP:A30 GV_NAME:A40 AGENTUR_ID:N UST_SCHLUESSEL:N Z_UMS_BRUTTO:N5 Z_UMS_NETTO:N5 Z_UST:N5`),
  payment: table('payment.csv', 'Z_Zahlart', 'Kassenabschluss', 'Summen je Zahlart', `ZAHLART_TYP:A25 ZAHLART_NAME:A60 Z_ZAHLART_BETRAG:N2`),
  cashPerCurrency: table('cash_per_currency.csv', 'Z_Waehrungen', 'Kassenabschluss', 'Bargeld je Währung', `ZAHLART_WAEH:A3 ZAHLART_BETRAG_WAEH:N2`),
  transactions: table('transactions.csv', 'Bonkopf', 'Einzelaufzeichnung', 'Bonkopf je Vorgang', `
    BON_ID:A40 BON_NR:N BON_TYP:A30 BON_NAME:A60 TERMINAL_ID:A50 BON_STORNO:A1 BON_START:A30 BON_ENDE:A30 BEDIENER_ID:A50
    BEDIENER_NAME:A50 UMS_BRUTTO:N2 KUNDE_NAME:A50 KUNDE_ID:A50 KUNDE_TYP:A50 KUNDE_STRASSE:A60 KUNDE_PLZ:A10 KUNDE_ORT:A62
    KUNDE_LAND:A3 KUNDE_USTID:A15 BON_NOTIZ:A255`),
  transactionsVat: table('transactions_vat.csv', 'Bonkopf_USt', 'Einzelaufzeichnung', 'Umsatzsteuer je Bon und Steuersatz', `
    BON_ID:A40 UST_SCHLUESSEL:N BON_BRUTTO:N5 BON_NETTO:N5 BON_UST:N5`),
  allocationGroups: table('allocation_groups.csv', 'Bonkopf_AbrKreis', 'Einzelaufzeichnung', 'Abrechnungskreise je Bon', `
    BON_ID:A40 ABRECHNUNGSKREIS:A50`),
  datapayment: table('datapayment.csv', 'Bonkopf_Zahlarten', 'Einzelaufzeichnung', 'Zahlarten je Bon', `
    BON_ID:A40 ZAHLART_TYP:A25 ZAHLART_NAME:A60 ZAHLWAEH_CODE:A3 ZAHLWAEH_BETRAG:N2 BASISWAEH_BETRAG:N2`),
  references: table('references.csv', 'Bon_Referenzen', 'Einzelaufzeichnung', 'Referenzen auf andere Vorgänge', `
    BON_ID:A40 POS_ZEILE:A50 REF_TYP:A20 REF_NAME:A40 REF_DATUM:A30 REF_Z_KASSE_ID:A50 REF_Z_NR:N REF_BON_ID:A40`),
  transactionsTse: table('transactions_tse.csv', 'TSE_Transaktionen', 'Einzelaufzeichnung', 'TSE-Transaktionen je Bon', `
    BON_ID:A40 TSE_ID:N TSE_TANR:N TSE_TA_START:A30 TSE_TA_ENDE:A30 TSE_TA_VORGANGSART:A30 TSE_TA_SIGZ:N TSE_TA_SIG:A512
    TSE_TA_FEHLER:A200 TSE_VORGANGSDATEN:A1000`),
  lines: table('lines.csv', 'Bonpos', 'Einzelaufzeichnung', 'Positionen je Bon', `
    BON_ID:A40 POS_ZEILE:A50 GUTSCHEIN_NR:A50 ARTIKELTEXT:A255 POS_TERMINAL_ID:A50 GV_TYP:A30 GV_NAME:A40 INHAUS:A1
    P_STORNO:A1 AGENTUR_ID:N ART_NR:A50 GTIN:A50 WARENGR_ID:A40 WARENGR:A50 MENGE:N3 FAKTOR:N3 EINHEIT:A50 STK_BR:N5`),
  linesVat: table('lines_vat.csv', 'Bonpos_USt', 'Einzelaufzeichnung', 'Umsatzsteuer je Position', `
    BON_ID:A40 POS_ZEILE:A50 UST_SCHLUESSEL:N POS_BRUTTO:N5 POS_NETTO:N5 POS_UST:N5`),
  itemamounts: table('itemamounts.csv', 'Bonpos_Preisfindung', 'Einzelaufzeichnung', 'Preisfindung je Position', `
    BON_ID:A40 POS_ZEILE:A50 TYP:A20 UST_SCHLUESSEL:N PF_BRUTTO:N5 PF_NETTO:N5 PF_UST:N5`),
  subitems: table('subitems.csv', 'Bonpos_Zusatzinfo', 'Einzelaufzeichnung', 'Zusatzinformationen je Position', `
    BON_ID:A40 POS_ZEILE:A50 ZI_ART_NR:A50 ZI_GTIN:A50 ZI_NAME:A60 ZI_WARENGR_ID:A40 ZI_WARENGR:A50 ZI_MENGE:N3 ZI_FAKTOR:N3
    ZI_EINHEIT:A50 ZI_UST_SCHLUESSEL:N ZI_BASISPREIS_BRUTTO:N5 ZI_BASISPREIS_NETTO:N5 ZI_BASISPREIS_UST:N5`),
} as const satisfies Record<string, Table>;

export type TableKey = keyof typeof Tables;

/** The tables in the order of the export (and of index.xml): Stammdaten, Kassenabschluss, Einzelaufzeichnung. */
export const TableOrder: readonly TableKey[] = [
  'cashpointclosing', 'location', 'cashregister', 'slaves', 'pa', 'tse', 'vat',
  'businesscases', 'payment', 'cashPerCurrency',
  'transactions', 'transactionsVat', 'allocationGroups', 'datapayment', 'references', 'transactionsTse',
  'lines', 'linesVat', 'itemamounts', 'subitems',
];

export const TaxonomyVersion = '2.3';
