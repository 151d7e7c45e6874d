import { PNG } from 'pngjs';
import t from 'tap';
import { appears, assertAccessible, assertFitsWidth, chromiumPresent, launchBrowser, newPortalPage, portalUser, settled, signInThroughPortal, Viewports } from './support/browser.js';
import { p, seedCheckout } from './support/checkout.js';
import { PasswordHashingEnv, startTestService } from './support/service.js';

/**
 * The back office in Chromium: a German Excel export (Windows-1252) with bad lines imported (each
 * line and why shown), a coupon edited in two tabs (the second sees "changed meanwhile", reloads or overwrites)
 * with an image uploaded, a promotion configuration edited as JSON (its error pointing at the path),
 * tried on a cart and activated.
 */
if (chromiumPresent(t)) {
  const svc = await startTestService(t, { env: PasswordHashingEnv });
  await seedCheckout(svc);
  const browser = await launchBrowser(t);
  const backoffice = await portalUser(svc, 'backoffice');
  const { context, page } = await newPortalPage(browser, svc);
  await signInThroughPortal(page, backoffice);

  t.test('imports a German Excel export with bad lines, showing each line and why; the CSV parser loads only then', async (t) => {
    const chunks: string[] = [];
    page.on('request', (request) => {
      if (/\/portal\/chunk-[\w-]+\.js$/.test(request.url())) chunks.push(request.url());
    });
    await page.getByRole('link', { name: 'Katalog' }).click();
    await page.getByRole('button', { name: 'Produkt WATER anzeigen' }).waitFor();
    // As Excel saves "CSV (Trennzeichen-getrennt)": Windows-1252 (ü is one byte, 0xFC), CRLF.
    const csv = ['sku;name;taxCategory', 'TEA;Grüner Tee;normal', ';Ohne Nummer;normal', 'COCOA;"Kakao; fein";reduced', 'PIE;"Kuchen;normal', 'MATE;Maté "Yerba";normal', ''].join('\r\n');
    await page.getByLabel('Datei (ndjson oder CSV)').setInputFiles({ name: 'produkte.csv', mimeType: 'text/csv', buffer: Buffer.from(csv, 'latin1') });
    t.equal(await page.getByLabel('Zeichensatz').inputValue(), 'auto', 'the character set is found unless chosen');
    t.same(chunks, [], 'the CSV parser is not loaded with the portal');
    await page.getByRole('button', { name: 'Import starten' }).click();
    await page.getByText('Gelesen als Windows-1252, Spalten durch Semikolon getrennt. Fertig: 3 Produkte gespeichert, 2 Zeilen fehlerhaft.').waitFor();
    t.equal(chunks.length, 1, 'it is loaded when a CSV file is read');
    t.equal(await page.getByRole('progressbar', { name: 'Importfortschritt' }).getAttribute('value'), '4', 'the bar is full: the four lines read');
    t.same(await page.locator('.failed-lines li').allTextContents(), [
      'Zeile 3: sku: Invalid input: expected string, received undefined',
      'Zeile 5: Ein Feld in Anführungszeichen endet nicht mit einem Anführungszeichen vor dem nächsten Trennzeichen (Anführungszeichen im Feld werden verdoppelt: ""); die Zeile wurde nicht gelesen, weiter ab der nächsten.',
    ], "each bad line by its line in the file: the API's message, and what could not be read");
    await assertAccessible(t, page, 'catalog import');

    await page.getByLabel('Name, SKU oder Code').fill('Kakao');
    await page.getByRole('button', { name: 'Suchen', exact: true }).click();
    await page.getByRole('button', { name: 'Produkt COCOA anzeigen' }).click();
    await page.getByRole('heading', { name: 'COCOA' }).waitFor();
    await page.getByText('Keine Preise.').waitFor();
    t.pass('its prices per category (none yet)');
    await page.getByLabel('Name, SKU oder Code').fill('WATER');
    await page.getByRole('button', { name: 'Suchen', exact: true }).click();
    await page.getByRole('button', { name: 'Produkt WATER anzeigen' }).click();
    await page.getByRole('cell', { name: '0,99 €' }).waitFor();
    await assertAccessible(t, page, 'catalog product');
    const stored = await svc.request('GET', `${p}/products/sku/COCOA`, { token: await svc.token(['productsRead']) });
    t.match(stored.body, { sku: 'COCOA', name: 'Kakao; fein' }, 'the CSV row was read with its quoted separator');
    t.match((await svc.request('GET', `${p}/products/sku/TEA`, { token: await svc.token(['productsRead']) })).body, { name: 'Grüner Tee' }, 'with its umlaut');
    t.match((await svc.request('GET', `${p}/products/sku/MATE`, { token: await svc.token(['productsRead']) })).body, { name: 'Maté "Yerba"' }, 'a quote inside a field is a character');
  });

  t.test('a coupon edited in two tabs: the second sees the conflict, reloads, then overwrites', async (t) => {
    const writer = await svc.token(['couponsWrite', 'couponsRead']);
    const created = await svc.request('POST', `${p}/coupons`, { token: writer, body: { channels: ['app'], type: 'digital', translations: { name: { de: 'Herbst' } } } });
    t.equal(created.status, 201, created.text);
    const tabs = [page, await context.newPage()];
    for (const tab of tabs) {
      await tab.goto('/portal/coupons');
      await tab.getByRole('button', { name: 'Gutschein Herbst bearbeiten' }).click();
      await tab.getByLabel('Name (deutsch)').waitFor();
    }
    const [a, b] = tabs as [typeof page, typeof page];
    await a.getByLabel('Name (deutsch)').fill('Herbst A');
    await a.getByRole('button', { name: 'Gutschein speichern' }).click();
    await a.getByText('Gespeichert.').waitFor();

    await b.getByLabel('Name (deutsch)').fill('Herbst B');
    await b.getByRole('button', { name: 'Gutschein speichern' }).click();
    await b.getByRole('alert').filter({ hasText: 'Zwischenzeitlich geändert: neu laden oder überschreiben.' }).waitFor();
    await assertAccessible(t, b, 'coupon conflict');
    await b.getByRole('button', { name: 'Neu laden' }).click();
    const nameField = b.getByLabel('Name (deutsch)');
    t.equal(await settled(() => nameField.inputValue(), (v) => v === 'Herbst A'), 'Herbst A', 'reloading shows what the other tab saved');
    t.equal(await b.getByRole('alert').count(), 0, 'the conflict is gone');

    await a.getByLabel('Name (deutsch)').fill('Herbst A2');
    await a.getByRole('button', { name: 'Gutschein speichern' }).click();
    await a.getByText('Gespeichert.').waitFor();
    const png = new PNG({ width: 4, height: 4 });
    png.data.fill(200);
    await b.getByLabel('Bild (PNG, JPEG, WebP, GIF)').setInputFiles({ name: 'herbst.png', mimeType: 'image/png', buffer: PNG.sync.write(png) });
    await b.getByText('Bild hochgeladen.').waitFor();
    t.ok(await appears(b.getByRole('img', { name: 'Bild des Gutscheins' })), 'the uploaded image is shown');
    await b.getByLabel('Name (deutsch)').fill('Herbst B');
    await b.getByRole('button', { name: 'Gutschein speichern' }).click();
    await b.getByRole('button', { name: 'Überschreiben' }).click();
    await b.getByText('Gespeichert.').waitFor();
    const coupon = await svc.request('GET', `${p}/coupons/${created.body.id}`, { token: writer });
    t.equal(coupon.body.translations.name.de, 'Herbst B', 'overwritten by the second tab');
    t.equal(coupon.body.image?.formats.length, 1, 'with the uploaded image');
    await b.close();
  });

  t.test('edits a promotion as JSON with its error at the path, tries it on a cart and activates it', async (t) => {
    // Promotions discount only discountable products.
    const admin = await svc.token(['productsWrite']);
    await svc.request('POST', `${p}/products/_batch`, { token: admin, raw: JSON.stringify({ sku: 'WATER', name: 'Wasser', taxCategory: 'normal', isDiscountable: true }), headers: { 'content-type': 'application/x-ndjson' } });
    await page.goto('/portal/promotions');
    await page.getByRole('button', { name: 'Neue Konfiguration' }).click();
    const editor = page.getByLabel('Konfiguration (JSON)');
    await editor.waitFor();
    const configuration = (rankID: string) =>
      JSON.stringify(
        {
          ranks: [{ id: 'main', evaluationMode: 'applyAll' }],
          groups: [
            {
              id: 'water',
              rules: [
                {
                  id: 'water-deal',
                  rankID,
                  condition: { type: 'hasSKU', args: { oneOf: 'WATER' } },
                  actions: [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.5', requiredAmount: '1', amount: '1', isMultiusable: 'true', name: '50 Cent auf Wasser' } }],
                },
              ],
            },
          ],
        },
        null,
        2,
      );
    await editor.fill('{"ranks": [');
    await page.getByRole('button', { name: 'Speichern' }).click();
    await page.getByRole('alert').filter({ hasText: 'Kein gültiges JSON (Zeile 1' }).waitFor();
    await editor.fill(configuration('nope'));
    await page.getByRole('button', { name: 'Speichern' }).click();
    const pointer = page.getByRole('button', { name: 'bei groups[0].rules[0].rankID' });
    await pointer.waitFor();
    t.match(await page.getByRole('alert').textContent(), /no rank "nope"/);
    await assertAccessible(t, page, 'promotion with a validation error');
    await pointer.click();
    const selected = await editor.evaluate((el: { value: string; selectionStart: number; selectionEnd: number }) => el.value.slice(el.selectionStart, el.selectionEnd));
    t.equal(selected, '"rankID"', 'the error points at the place in the text');

    await editor.fill(configuration('main'));
    await page.getByRole('button', { name: 'Speichern' }).click();
    await page.getByText('Gespeichert.').waitFor();
    await page.getByLabel('Artikel (je Zeile: SKU Menge)').fill('WATER 2\nBREAD 1');
    await page.getByRole('button', { name: 'Ausprobieren' }).click();
    const result = page.locator('[aria-live="polite"]');
    await result.getByText('50 Cent auf Wasser').waitFor();
    t.match(await result.textContent(), /Summe.*3,47\s€/, 'the cart priced with the discount (1,98 € + 2,49 € − 1,00 €)');
    t.match(await result.textContent(), /water \/ water-deal.*ja.*1,00\s€/, 'rule by rule');
    await assertAccessible(t, page, 'promotion tried on a cart');

    await page.getByRole('button', { name: 'Aktivieren' }).click();
    await page.getByText('Aktiviert: Neue Warenkörbe werden mit dieser Konfiguration berechnet.').waitFor();
    const active = await svc.request('GET', `${p}/promotions/configurations/active`, { token: await svc.token(['promotionsRead']) });
    t.match(active.body, { active: true, groups: [{ id: 'water' }] });
  });

  t.test('catalog, coupons and promotions fit a phone', async (t) => {
    const phone = await newPortalPage(browser, svc, { viewport: Viewports.phone });
    await signInThroughPortal(phone.page, backoffice);
    for (const [screen, ready] of [['catalog', 'Produkt WATER anzeigen'], ['coupons', 'Gutschein Herbst B bearbeiten'], ['promotions', 'Konfiguration 1 öffnen']] as const) {
      await phone.page.goto(`/portal/${screen}`);
      await phone.page.getByRole('button', { name: ready }).waitFor();
      await assertFitsWidth(t, phone.page, `${screen} on a phone`);
      await assertAccessible(t, phone.page, `${screen} on a phone`);
    }
    await phone.context.close();
  });
}
