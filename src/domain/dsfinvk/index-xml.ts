import { ColumnDelimiter, printable } from './csv.js';
import { TableOrder, Tables, type Column } from './tables.js';

/**
 * index.xml: the GDPdU description of every table and column of the export, and the DTD it names.
 */
export const DtdFile = 'gdpdu-01-09-2004.dtd';

/** Text as XML character data: markup escaped, and what XML 1.0 does not allow (no escape does) as spaces, as in the CSV files. */
const escape = (value: string) => printable(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function columnXml(column: Column): string {
  const type =
    column.type.kind === 'text'
      ? `<AlphaNumeric/>\n          <MaxLength>${column.type.maxLength}</MaxLength>`
      : column.type.accuracy > 0
        ? `<Numeric>\n            <Accuracy>${column.type.accuracy}</Accuracy>\n          </Numeric>`
        : '<Numeric/>';
  return `        <VariableColumn>
          <Name>${column.name}</Name>
          <Description>${escape(column.description)}</Description>
          ${type}
        </VariableColumn>`;
}

export interface Supplier {
  name: string;
  location: string;
  comment: string;
}

export function indexXml(supplier: Supplier, media: string): string {
  const tables = TableOrder.map((key) => {
    const table = Tables[key];
    return `    <Table>
      <URL>${table.file}</URL>
      <Name>${table.name}</Name>
      <Description>${escape(`${table.module}: ${table.description}`)}</Description>
      <UTF8/>
      <DecimalSymbol>,</DecimalSymbol>
      <DigitGroupingSymbol>.</DigitGroupingSymbol>
      <Range>
        <From>2</From>
      </Range>
      <VariableLength>
        <ColumnDelimiter>${ColumnDelimiter}</ColumnDelimiter>
        <RecordDelimiter>&#13;&#10;</RecordDelimiter>
        <TextEncapsulator>"</TextEncapsulator>
${table.columns.map(columnXml).join('\n')}
      </VariableLength>
    </Table>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE DataSet SYSTEM "${DtdFile}">
<DataSet>
  <Version>1.0</Version>
  <DataSupplier>
    <Name>${escape(supplier.name)}</Name>
    <Location>${escape(supplier.location)}</Location>
    <Comment>${escape(supplier.comment)}</Comment>
  </DataSupplier>
  <Media>
    <Name>${escape(media)}</Name>
${tables.join('\n')}
  </Media>
</DataSet>
`;
}

/** The element declarations of the GDPdU description standard (Beschreibungsstandard), version 01.09.2004. */
export const GdpduDtd = `<?xml version="1.0" encoding="UTF-8"?>
<!-- GDPdU Beschreibungsstandard, Version 01.09.2004: the document type of index.xml. -->
<!ELEMENT DataSet (Version, DataSupplier?, Command*, Media+, Command*)>
<!ELEMENT Version (#PCDATA)>
<!ELEMENT DataSupplier (Name, Location, Comment)>
<!ELEMENT Media (Name, Command*, Table+, Command*)>
<!ELEMENT Command (#PCDATA)>
<!ELEMENT Table (URL, Name?, Description?, Validity?, (ANSI | Macintosh | OEM | UTF16 | UTF7 | UTF8)?, (DecimalSymbol, DigitGroupingSymbol)?, SkipNumBytes?, Range?, Epoch?, (VariableLength | FixedLength))>
<!ELEMENT URL (#PCDATA)>
<!ELEMENT Name (#PCDATA)>
<!ELEMENT Description (#PCDATA)>
<!ELEMENT Validity (Range, Format?)>
<!ELEMENT Range (From, (To | Length)?)>
<!ELEMENT From (#PCDATA)>
<!ELEMENT To (#PCDATA)>
<!ELEMENT Length (#PCDATA)>
<!ELEMENT Format (#PCDATA)>
<!ELEMENT Location (#PCDATA)>
<!ELEMENT Comment (#PCDATA)>
<!ELEMENT ANSI EMPTY>
<!ELEMENT Macintosh EMPTY>
<!ELEMENT OEM EMPTY>
<!ELEMENT UTF16 EMPTY>
<!ELEMENT UTF7 EMPTY>
<!ELEMENT UTF8 EMPTY>
<!ELEMENT DecimalSymbol (#PCDATA)>
<!ELEMENT DigitGroupingSymbol (#PCDATA)>
<!ELEMENT SkipNumBytes (#PCDATA)>
<!ELEMENT Epoch (#PCDATA)>
<!ELEMENT VariableLength (ColumnDelimiter?, RecordDelimiter?, TextEncapsulator?, ((VariablePrimaryKey+, VariableColumn*) | VariableColumn+), ForeignKey*)>
<!ELEMENT ColumnDelimiter (#PCDATA)>
<!ELEMENT RecordDelimiter (#PCDATA)>
<!ELEMENT TextEncapsulator (#PCDATA)>
<!ELEMENT VariablePrimaryKey (Name, Description?, (Numeric | (AlphaNumeric, MaxLength?) | Date), Map*)>
<!ELEMENT VariableColumn (Name, Description?, (Numeric | (AlphaNumeric, MaxLength?) | Date), Map*)>
<!ELEMENT FixedLength ((Length | RecordDelimiter)?, ((FixedPrimaryKey+, FixedColumn*) | FixedColumn+), ForeignKey*)>
<!ELEMENT FixedPrimaryKey (Name, Description?, (Numeric | AlphaNumeric | Date), Map*, FixedRange)>
<!ELEMENT FixedColumn (Name, Description?, (Numeric | AlphaNumeric | Date), Map*, FixedRange)>
<!ELEMENT FixedRange (From, (To | Length))>
<!ELEMENT ForeignKey (Name+, References)>
<!ELEMENT References (#PCDATA)>
<!ELEMENT Numeric ((ImpliedAccuracy | Accuracy)?)>
<!ELEMENT ImpliedAccuracy (#PCDATA)>
<!ELEMENT Accuracy (#PCDATA)>
<!ELEMENT AlphaNumeric EMPTY>
<!ELEMENT MaxLength (#PCDATA)>
<!ELEMENT Date (Format)>
<!ELEMENT Map (Description?, From, To)>
`;
