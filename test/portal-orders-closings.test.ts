import { readFile } from 'node:fs/promises';
import { unzipSync } from 'fflate';
import type { Page } from 'playwright-core';
import t from 'tap';
import { assertAccessible, assertFitsWidth, chromiumPresent, launchBrowser, newPortalPage, portalDate, portalUser, screenshot, signInThroughPortal, Viewports } from './support/browser.js';
import { p, seedCheckout } from './support/checkout.js';
import { insertOrder, orderDocument } from './support/closing.js';
import { PasswordHashingEnv, startTestService } from './support/service.js';

/**
 * The portal's Orders and Closings in Chromium, as the accounting role uses them: an order found by
 * its date (typed in the chosen language's form, German and English), its receipt shown and downloaded; a closing started as a report job, watched until done,
 * and its DSFinV-K zip downloaded; a closing schedule whose error is shown at its field, deleted only after asking.
 */
if (chromiumPresent(t)) {
  const svc = await startTestService(t, { env: PasswordHashingEnv });
  const fx = await seedCheckout(svc);
  await fx.processIn('successful');
  await fx.processIn('successful', { items: [{ sku: 'BREAD', amount: 1 }, { sku: 'WATER', amount: 1 }] });
  // One order in shop 2, paid by a method of the project's own that the portal has no words for.
  const admin = await svc.token(['projectsWrite']);
  await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard', 'houseCard'] } });
  const other = await fx.createProcess({ items: [{ sku: 'WATER', amount: 1 }], paymentMethod: 'houseCard', info: { shopID: 's2' } });
  if (other.status !== 201) throw new Error(other.text);
  await fx.patchProcess(other.body.id, { paymentState: 'successful' });
  const browser = await launchBrowser(t);
  const accounting = await portalUser(svc, 'accounting');
  const { page } = await newPortalPage(browser, svc);
  await signInThroughPortal(page, accounting);

  const downloaded = async (page: Page, click: () => Promise<void>) => {
    const [download] = await Promise.all([page.waitForEvent('download'), click()]);
    return { name: download.suggestedFilename(), bytes: await readFile((await download.path())!) };
  };
  /** A day from today as the portal writes it: German (27.11.2026) or US English (11/27/2026). */
  const day = (offsetDays: number, form: 'de' | 'en-US' = 'de') => portalDate(new Date(Date.now() + offsetDays * 86_400_000), form);

  t.test('finds an order by its date and opens its receipt in the page and as a download', async (t) => {
    t.equal(await page.getByRole('link', { name: 'Heute' }).getAttribute('aria-current'), 'page', 'accounting starts at Today');
    await page.getByRole('link', { name: 'Bestellungen' }).click();
    t.equal(await page.getByLabel('Von').inputValue(), day(0), 'today, as German dates are written');
    await page.getByLabel('Von').fill(day(-3));
    await page.getByLabel('Bis').fill(day(-1));
    await page.getByRole('button', { name: 'Suchen' }).click();
    await page.getByText('Keine Bestellung in diesem Zeitraum.').waitFor();

    await page.getByLabel('Shop').selectOption('s1');
    await page.getByLabel('Bis').fill(day(0));
    await page.getByRole('button', { name: 'Suchen' }).click();
    await page.getByText('2 Bestellungen').waitFor();
    t.match(await page.getByRole('table').textContent(), new RegExp(`${day(0).replace(/\./g, '\\.')}, \\d{2}:\\d{2}.*Bargeld.*1,98\\s€`), 'the table writes the date as the filter does, and the payment method in words');
    await assertAccessible(t, page, 'orders');
    await screenshot(page, 'orders');

    await page.getByRole('button', { name: 'Bestellung 1 öffnen' }).click();
    const detail = page.getByRole('region', { name: /Bestellung 1 · Shop 1/ });
    await detail.waitFor();
    t.match(await detail.textContent(), /Wasser.*0,99\s€.*19 %.*1,98\s€/, 'the lines in de-DE money');
    t.match(await detail.textContent(), /Netto.*1,66\s€.*0,32\s€.*1,98\s€/, 'the taxes per rate');
    t.match(await detail.textContent(), /abgeschlossen/, "the order's state in words");
    t.match(await detail.textContent(), /ZahlungenZahlartStatusSummeBargeldbezahlt1,98\s€/, 'the payment in words');
    await page.getByText('Transaktionsnummer').waitFor();
    await page.getByRole('button', { name: 'Beleg anzeigen' }).click();
    await page.getByTitle('Beleg der Bestellung 1 (PDF)').waitFor();
    const receipt = await downloaded(page, () => page.getByRole('button', { name: 'Beleg herunterladen' }).click());
    t.equal(receipt.bytes.subarray(0, 5).toString(), '%PDF-', 'the receipt is a PDF');
    t.match(receipt.name, /^beleg-s1-1\.pdf$/);
    await assertAccessible(t, page, 'order detail');
    await page.getByRole('button', { name: 'Zurück zur Liste' }).click();
  });

  t.test('starts a closing, watches it finish and downloads its DSFinV-K zip', async (t) => {
    await page.getByRole('link', { name: 'Abschlüsse' }).click();
    await page.getByText('Noch kein Abschluss.').waitFor();
    await page.getByLabel('Shop').selectOption('s1');
    await page.getByRole('button', { name: 'Abschluss starten' }).click();
    await page.getByText('Fertig: Abschluss 1.').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Abschluss 1 öffnen' }).first().click();
    const detail = page.getByRole('region', { name: /Abschluss 1 · Shop 1/ });
    await detail.waitFor();
    t.match(await detail.textContent(), /19 %.*7 %/, 'totals by tax rate');
    t.match(await detail.textContent(), /· 2 Bestellungen ·/, 'the order count in the plural');
    t.match(await detail.textContent(), /Bargeld5,46\s€/, 'totals by payment method, in words');
    const zipButton = page.getByRole('button', { name: 'DSFinV-K herunterladen' });
    await zipButton.waitFor({ timeout: 30_000 });
    await assertAccessible(t, page, 'closing detail');
    await screenshot(page, 'closings');
    const zip = await downloaded(page, () => zipButton.click());
    t.match(zip.name, /\.zip$/);
    const files = Object.keys(unzipSync(zip.bytes));
    t.ok(files.includes('index.xml') && files.includes('transactions.csv'), `a DSFinV-K export (${files.length} files)`);
    const csv = await downloaded(page, () => page.getByRole('button', { name: 'Belege (CSV) herunterladen' }).click());
    t.match(csv.bytes.toString('utf8'), /\n/, 'the aggregated receipts too');
    await page.getByRole('button', { name: 'Zurück zur Liste' }).click();
    await page.getByRole('button', { name: 'Abschluss 1 öffnen' }).waitFor();
    await assertAccessible(t, page, 'closings');
  });

  t.test("shows a schedule's validation error at its field, saves it, and deletes it only after asking", async (t) => {
    await page.getByRole('button', { name: 'Zeitplan hinzufügen' }).click();
    const form = page.getByRole('form', { name: 'Zeitplan hinzufügen' });
    await form.getByLabel('Stunde').fill('24');
    await form.getByLabel('Minute').fill('30');
    await form.getByRole('button', { name: 'Zeitplan speichern' }).click();
    await form.getByText('with hour 24 (the end of the day) minute must be 0').waitFor();
    t.equal(await form.getByLabel('Minute').getAttribute('aria-invalid'), 'true', 'the minute field is marked');
    t.equal(await form.getByLabel('Stunde').getAttribute('aria-invalid'), null, 'the hour is not');
    await assertAccessible(t, page, 'schedule form with an error');
    await form.getByLabel('Minute').fill('0');
    await form.getByRole('button', { name: 'Zeitplan speichern' }).click();
    await page.getByText('Mo, Di, Mi, Do, Fr, Sa um 24:00 (Europe/Berlin)', { exact: true }).waitFor();
    const schedules = async () => (await svc.request('GET', `${p}/closings/schedules`, { token: await svc.token(['closingsRead']) })).body.schedules;
    t.match(await schedules(), [{ shop: 's1', hour: 24, minute: 0 }]);

    const when = 'Mo, Di, Mi, Do, Fr, Sa um 24:00 (Europe/Berlin)';
    t.ok(await page.getByRole('button', { name: `Bearbeiten (${when})` }).isVisible(), 'edit is a button with words, naming the schedule');
    await page.getByRole('button', { name: `Löschen (${when})` }).click();
    const dialog = page.getByRole('dialog', { name: `Zeitplan ${when} löschen?` });
    await dialog.getByRole('button', { name: 'Nicht löschen' }).click();
    await dialog.waitFor({ state: 'hidden' });
    t.equal((await schedules()).length, 1, 'not deleted without the yes');
    await page.getByRole('button', { name: `Löschen (${when})` }).click();
    await dialog.getByRole('button', { name: 'Ja, Zeitplan löschen' }).click();
    await page.getByText('Kein Zeitplan für diesen Shop.').waitFor();
    t.same(await schedules(), [], 'deleted after the yes');
  });

  t.test('finds one order of a shop, and says so in the singular', async (t) => {
    await page.getByRole('link', { name: 'Bestellungen' }).click();
    await page.getByLabel('Shop').selectOption('s2');
    await page.getByRole('button', { name: 'Suchen' }).click();
    await page.getByText('1 Bestellung', { exact: true }).waitFor();
    t.match(await page.getByRole('table').textContent(), /houseCard/, 'a payment method the portal has no words for, as the API gives it');
  });

  t.test('a date field says how to write a date and refuses what is none', async (t) => {
    const from = page.getByLabel('Von');
    t.match(await from.getAttribute('aria-describedby'), /hint/, 'the field points at its pattern');
    await page.getByText('TT.MM.JJJJ').first().waitFor();
    await from.fill('31.02.2026');
    await page.getByLabel('Bis').fill(day(-1));
    await page.getByLabel('Shop').selectOption('');
    await page.getByRole('button', { name: 'Suchen' }).click();
    await page.getByText('Bitte als TT.MM.JJJJ eingeben, etwa 27.11.2026.').waitFor();
    t.equal(await from.getAttribute('aria-invalid'), 'true', 'the field is marked');
    t.ok(await page.getByText('1 Bestellung', { exact: true }).isVisible(), 'the list stays as it was');
    await from.fill(day(0));
    await page.getByRole('button', { name: 'Suchen' }).click();
    await page.getByText('„Bis“ liegt vor „Von“.').waitFor();
    t.equal(await page.getByLabel('Bis').getAttribute('aria-invalid'), 'true', 'an end before the start is marked too');
    await assertAccessible(t, page, 'date fields with errors');
    await page.getByLabel('Bis').fill(day(0));
    await page.getByRole('button', { name: 'Suchen' }).click();
    await page.getByText('3 Bestellungen').waitFor();
    t.equal(await from.getAttribute('aria-invalid'), null, 'the marks are gone');
  });

  t.test('in an English browser, dates, money and counts follow the chosen language, in the date fields as in the table', async (t) => {
    const english = await newPortalPage(browser, svc, { locale: 'en-US' });
    const en = english.page;
    await signInThroughPortal(en, accounting, 'en');
    await en.getByRole('link', { name: 'Orders' }).click();
    t.equal(await en.getByLabel('From').inputValue(), day(0, 'en-US'), 'today, as US English writes it');
    await en.getByText('MM/DD/YYYY').first().waitFor();
    await en.getByRole('button', { name: 'Search' }).click();
    await en.getByText('3 orders').waitFor();
    const rows = en.getByRole('table');
    t.match(await rows.textContent(), new RegExp(`${day(0, 'en-US')}, \\d{1,2}:\\d{2}\\s[AP]M`), 'the table writes dates as the field does');
    t.match(await rows.textContent(), /Cash€1\.98/, 'the method in words, money in English');
    await en.getByLabel('Shop').selectOption('s2');
    await en.getByRole('button', { name: 'Search' }).click();
    await en.getByText('1 order', { exact: true }).waitFor();
    await en.getByLabel('From').fill('27.11.2026');
    await en.getByRole('button', { name: 'Search' }).click();
    await en.getByText('Please type it as MM/DD/YYYY, such as 11/27/2026.').waitFor();
    await en.getByLabel('From').fill(day(0, 'en-US'));
    await en.getByRole('button', { name: 'Search' }).click();
    await en.getByText('Please type it as MM/DD/YYYY, such as 11/27/2026.').waitFor({ state: 'detached' });
    await assertAccessible(t, en, 'orders in English');

    // The same browser, the person chooses German: the fields and the table change their form with the words.
    await en.getByLabel('Language').selectOption('de');
    await en.getByText('1 Bestellung', { exact: true }).waitFor();
    // The field writes its day anew after the render that changed the words (date-field.ts, an effect): a moment later.
    const from = en.getByLabel('Von');
    for (const deadline = Date.now() + 5000; (await from.inputValue()) !== day(0) && Date.now() < deadline; ) await en.waitForTimeout(20);
    t.equal(await from.inputValue(), day(0), 'the field now writes the day as German does');
    t.match(await en.getByRole('table').textContent(), new RegExp(`${day(0).replace(/\./g, '\\.')}, \\d{2}:\\d{2}`), 'and so does the table');
    await english.context.close();
  });

  t.test('orders and closings fit a phone', async (t) => {
    const phone = await newPortalPage(browser, svc, { viewport: Viewports.phone });
    await signInThroughPortal(phone.page, accounting);
    await phone.page.getByRole('link', { name: 'Bestellungen' }).click();
    await phone.page.getByRole('button', { name: 'Suchen' }).click();
    await phone.page.getByText('3 Bestellungen').waitFor();
    await assertFitsWidth(t, phone.page, 'orders on a phone');
    await phone.page.getByRole('link', { name: 'Abschlüsse' }).click();
    await phone.page.getByRole('button', { name: 'Abschluss 1 öffnen' }).waitFor();
    await assertFitsWidth(t, phone.page, 'closings on a phone');
    await phone.context.close();
  });

  t.test("an order in forints shows its amounts in the subunit the API counts in (ISO 4217's two decimals, not Intl's none)", async (t) => {
    const shops = await svc.token(['shopsWrite']);
    await svc.request('POST', `${p}/shops`, { token: shops, body: { id: 's-huf', name: 'Budapest' } });
    const order = orderDocument({ shop: 's-huf', lines: [{ type: 'default', sku: 'PAPRIKA', name: 'Paprika', amount: 2, price: 123_456, taxRate: '19' }] });
    order.doc.currency = 'HUF';
    order.doc.payments[0].currency = 'HUF';
    await insertOrder(svc.sql, order);
    await page.reload(); // the shop picker reads the shops once
    await page.getByRole('link', { name: 'Bestellungen' }).click();
    await page.getByLabel('Shop').selectOption('s-huf');
    await page.getByRole('button', { name: 'Suchen' }).click();
    await page.getByText('1 Bestellung', { exact: true }).waitFor();
    // 246 912 fillér are 2 469,12 Ft (Intl's digits for HUF made it 246 912 Ft).
    t.match(await page.getByRole('table').textContent(), /2\.469,12\sHUF/, 'the total in the list');
    await page.getByRole('button', { name: 'Bestellung 1 öffnen' }).click();
    const detail = page.getByRole('region', { name: /Bestellung 1/ });
    await detail.waitFor();
    t.match(await detail.textContent(), /Paprika21\.234,56\sHUF19 %2\.469,12\sHUF/, 'the line: amount 2, its price and total');
    t.match(await detail.textContent(), /Bargeldbezahlt2\.469,12\sHUF/, 'the payment');
    await page.getByRole('button', { name: 'Zurück zur Liste' }).click();
  });
}
