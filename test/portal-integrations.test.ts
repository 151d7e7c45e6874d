import { readFile } from 'node:fs/promises';
import { jetstream } from '@nats-io/jetstream';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { appears, assertAccessible, assertFitsWidth, chromiumPresent, launchBrowser, newPortalPage, portalUser, screenshot, settled, signInThroughPortal, Viewports } from './support/browser.js';
import { p, patchPos, seedCheckout } from './support/checkout.js';
import { PasswordHashingEnv, startTestService, TestProject } from './support/service.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

/**
 * The owner's Integrations screen in Chromium: a webhook and a NATS access are made (the signing
 * secret and the .creds file shown once, with the warning, copied and downloaded, and gone once the
 * screen is left), the API's refusal of an address shown at its field, rotating and deleting asked
 * first, a webhook disabled (its reason in words, nothing sent again) and enabled, its deliveries
 * after a real sale listed with their results in words and one sent again to a real receiver.
 */
if (chromiumPresent(t)) {
  const receiver = await startWebhookReceiver(t);
  const svc = await startTestService(t, {
    env: { ...PasswordHashingEnv, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '400,800', WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_TIMEOUT_MS: '700' },
  });
  const fx = await seedCheckout(svc);
  const browser = await launchBrowser(t);
  const owner = await portalUser(svc, 'owner');
  const { context, page } = await newPortalPage(browser, svc);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await signInThroughPortal(page, owner);
  const token = await svc.token(['projectsWrite']);
  const listed = async () => (await svc.request('GET', `${p}/integrations`, { token })).body.integrations as any[];
  const named = async (name: string) => (await listed()).find((i) => i.name === name);
  const deliveries = async (id: string) => (await svc.request('GET', `${p}/integrations/${id}/deliveries?perPage=1000`, { token })).body.deliveries as any[];

  /** The one-time secret's text and file, as the page offers them: what the download saved, and its name. */
  const download = async (where: Page, button: string) => {
    const [file] = await Promise.all([where.waitForEvent('download'), where.getByRole('button', { name: button }).click()]);
    return { name: file.suggestedFilename(), text: await readFile(await file.path(), 'utf8') };
  };

  /** Whether a .creds file connects to the file's NATS and reads its integration's consumer (the error when not). */
  const readsConsumer = async (creds: string, nats: { consumer: string }): Promise<true | unknown> => {
    try {
      const nc = await connect({ servers: svc.natsUrl, authenticator: credsAuthenticator(new TextEncoder().encode(creds)), maxReconnectAttempts: 0 });
      try {
        await (await jetstream(nc).consumers.get('EVENTS', nats.consumer)).info();
        return true;
      } finally {
        await nc.close();
      }
    } catch (err) {
      return err;
    }
  };

  let webhookSecret = '';
  let creds = '';

  t.test("creates a webhook for chosen areas; its secret is shown once with the warning, copied and downloaded, and gone after leaving", async (t) => {
    await page.getByRole('link', { name: 'Integrationen' }).click();
    await page.getByText('Noch keine Integration.').waitFor();
    await page.getByLabel('Name').fill('Warenwirtschaft');
    await page.getByLabel('Adresse (URL)').fill(`${receiver.url}/erp`);
    await page.getByRole('radio', { name: 'Nur Ereignisse dieser Bereiche:' }).check();
    await page.getByRole('checkbox', { name: 'Kasse' }).check();
    await page.getByRole('checkbox', { name: 'Bestellungen' }).check();
    await page.getByRole('button', { name: 'Webhook anlegen' }).click();

    const shown = page.getByRole('region', { name: 'Signiergeheimnis für Warenwirtschaft' });
    webhookSecret = await shown.getByLabel('Signiergeheimnis').inputValue();
    t.match(webhookSecret, /^whsec_[A-Za-z0-9+/=]{40,}$/, 'the secret is shown');
    t.match(await shown.textContent(), /Wird nur jetzt angezeigt\..*nicht noch einmal/, 'with a plain warning');
    t.equal(await page.evaluate('document.activeElement.textContent'), 'Signiergeheimnis für Warenwirtschaft', 'the reader is taken to it');
    await shown.getByRole('button', { name: 'Kopieren' }).click();
    await shown.getByRole('status').getByText('In die Zwischenablage kopiert.').waitFor();
    t.equal(await page.evaluate('navigator.clipboard.readText()'), webhookSecret, 'copied to the clipboard');
    t.same(await download(page, 'Herunterladen (Warenwirtschaft-secret.txt)'), { name: 'Warenwirtschaft-secret.txt', text: webhookSecret }, 'downloaded as <name>-secret.txt');

    const entry = page.getByRole('article', { name: 'Warenwirtschaft' });
    t.match(await entry.textContent(), /ArtWebhookStatusaktivAdresse.*\/erpEreignisseKasse \(alle\), Bestellungen \(alle\)Angelegt/, 'listed in words');
    t.match(await named('Warenwirtschaft'), { kind: 'webhook', url: `${receiver.url}/erp`, events: ['pos.*', 'order.*'], state: 'active' }, 'made with the areas chosen');
    t.notOk(JSON.stringify(await listed()).includes(webhookSecret), 'the list answers no secret');
    await assertAccessible(t, page, 'a new webhook with its secret');

    await page.getByRole('link', { name: 'Einstellungen' }).click();
    await page.getByRole('heading', { name: 'Unternehmen' }).waitFor();
    await page.getByRole('link', { name: 'Integrationen' }).click();
    await entry.waitFor();
    t.equal(await page.getByText(/whsec_/).count(), 0, 'gone after leaving the screen and coming back');
    t.equal(await page.getByRole('region', { name: /Signiergeheimnis für/ }).count(), 0, 'no secret to show');
  });

  t.test("shows the API's refusal of an address at the address field, and makes nothing", async (t) => {
    await page.getByLabel('Name').fill('Metadaten');
    await page.getByLabel('Adresse (URL)').fill('http://169.254.169.254/');
    await page.getByRole('button', { name: 'Webhook anlegen' }).click();
    const address = page.getByLabel('Adresse (URL)');
    await page.locator('.field-error').first().waitFor();
    t.equal(await address.getAttribute('aria-invalid'), 'true', 'the address is marked');
    const message = await page.locator(`#${await address.getAttribute('id')}-error`).textContent();
    t.match(message, /169\.254\.169\.254 is a link-local/, `the API's words at the field: ${message}`);
    t.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), null, 'the name is not marked');
    await assertAccessible(t, page, 'the webhook form with an error');
    t.same((await listed()).map((i) => i.name), ['Warenwirtschaft'], 'nothing was made');
    await page.getByLabel('Name').fill('');
    await page.getByLabel('Adresse (URL)').fill('');
  });

  t.test('creates a NATS access (its filter checked at the field); its .creds file is shown once, downloads as <name>.creds and reads the consumer', async (t) => {
    await page.getByRole('radio', { name: /^NATS-Zugang/ }).check();
    await page.getByLabel('Name').fill('Kasse 3');
    await page.getByLabel('Filter').fill('pos..x');
    await page.getByRole('button', { name: 'NATS-Zugang anlegen' }).click();
    await page.locator('.field-error').first().waitFor();
    t.equal(await page.getByLabel('Filter').getAttribute('aria-invalid'), 'true', 'the filter is marked');
    await page.getByLabel('Filter').fill('pos.>');
    await page.getByRole('button', { name: 'NATS-Zugang anlegen' }).click();

    const shown = page.getByRole('region', { name: 'Zugangsdatei für Kasse 3' });
    creds = await shown.getByLabel('Inhalt der Datei Kasse 3.creds').inputValue();
    t.match(creds, /BEGIN NATS USER JWT[\s\S]*BEGIN USER NKEY SEED/, 'the .creds file is shown');
    t.match(await shown.textContent(), /Wird nur jetzt angezeigt\./, 'with the warning');
    t.same(await download(page, 'Herunterladen (Kasse 3.creds)'), { name: 'Kasse 3.creds', text: creds }, 'downloaded as <name>.creds');
    const access = await named('Kasse 3');
    t.match(access, { kind: 'nats', filter: 'pos.>', nats: { filterSubject: `events.${TestProject}.pos.>` } }, 'made with its filter');
    t.equal(await readsConsumer(creds, access.nats), true, 'the file shown connects and reads its consumer');

    const entry = page.getByRole('article', { name: 'Kasse 3' });
    t.match(await entry.textContent(), new RegExp(`ArtNATS-ZugangStatusaktivFilterevents\\.${TestProject}\\.pos\\.>Consumer`), 'listed in words');
    t.match(await page.getByRole('region', { name: 'Integrationen des Projekts' }).textContent(), /2 Integrationen/, 'counted in words');
    await assertAccessible(t, page, 'a new NATS access with its file');

    await page.getByRole('link', { name: 'Konten' }).click();
    await page.getByRole('heading', { name: 'Konto anlegen' }).waitFor();
    await page.getByRole('link', { name: 'Integrationen' }).click();
    await entry.waitFor();
    t.equal(await page.getByText(/BEGIN NATS USER JWT/).count(), 0, 'gone after leaving the screen and coming back');
  });

  t.test("rotates a NATS access's file and a webhook's secret only after asking", async (t) => {
    const entry = page.getByRole('article', { name: 'Kasse 3' });
    await entry.getByRole('button', { name: 'Zugangsdatei erneuern (Kasse 3)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Zugangsdatei von Kasse 3 erneuern?' });
    t.match(await dialog.textContent(), /sofort auf allen NATS-Servern gesperrt/, 'says the old file is revoked at once');
    await assertAccessible(t, page, 'the question before rotating');
    await dialog.getByRole('button', { name: 'Nicht erneuern' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const access = await named('Kasse 3');
    t.equal(await readsConsumer(creds, access.nats), true, 'without the yes the file still works');
    t.equal(await entry.getByRole('region').count(), 0, 'and nothing new is shown');

    await entry.getByRole('button', { name: 'Zugangsdatei erneuern (Kasse 3)' }).click();
    await dialog.getByRole('button', { name: 'Ja, erneuern und die bisherige sperren' }).click();
    const rotated = await entry.getByRole('region', { name: 'Zugangsdatei für Kasse 3' }).getByLabel('Inhalt der Datei Kasse 3.creds').inputValue();
    t.match(rotated, /BEGIN NATS USER JWT/, 'the new file is shown in its entry');
    t.not(rotated, creds, 'a new one');
    t.equal(await readsConsumer(rotated, access.nats), true, 'the new file reads the consumer');
    const old = await settled(() => readsConsumer(creds, access.nats), (r) => r !== true);
    t.ok(old instanceof Error, `the old file is refused (${String(old)})`);
    creds = rotated;

    const hook = page.getByRole('article', { name: 'Warenwirtschaft' });
    await hook.getByRole('button', { name: 'Signiergeheimnis erneuern (Warenwirtschaft)' }).click();
    const question = page.getByRole('dialog', { name: 'Signiergeheimnis von Warenwirtschaft erneuern?' });
    t.match(await question.textContent(), /noch 24 Stunden/, 'says the old secret signs for a day');
    await question.getByRole('button', { name: 'Ja, neues Geheimnis' }).click();
    const secret = await hook.getByRole('region', { name: 'Signiergeheimnis für Warenwirtschaft' }).getByLabel('Signiergeheimnis').inputValue();
    t.match(secret, /^whsec_/, 'the new secret is shown in its entry');
    t.not(secret, webhookSecret, 'a new one');
    webhookSecret = secret;
    await hook.getByRole('button', { name: 'Gesichert, ausblenden' }).click();
    t.equal(await hook.getByText(/whsec_/).count(), 0, 'hidden once saved');
  });

  t.test('says that a NATS access made before integrations had accounts of their own must be rotated, until it is', async (t) => {
    const made = await svc.request('POST', `${p}/integrations`, { token, body: { name: 'Altkasse', kind: 'nats' } });
    t.equal(made.status, 201, made.text);
    // As an earlier version left it: its credential was a user of the platform's account.
    await svc.sql`update integrations set nats_account = null, user_issued_at = null where id = ${made.body.id}`;
    await page.getByRole('link', { name: 'Konten' }).click();
    await page.getByRole('heading', { name: 'Konto anlegen' }).waitFor();
    await page.getByRole('link', { name: 'Integrationen' }).click();
    const entry = page.getByRole('article', { name: 'Altkasse' });
    const note = entry.getByText(/verbindet nicht mehr\. Erneuern Sie sie/);
    await note.waitFor();
    t.equal(await note.getAttribute('role'), 'status', 'the entry says its file no longer connects and what to do');
    await assertAccessible(t, page, 'a NATS access to be rotated');

    await entry.getByRole('button', { name: 'Zugangsdatei erneuern (Altkasse)' }).click();
    await page.getByRole('dialog', { name: 'Zugangsdatei von Altkasse erneuern?' }).getByRole('button', { name: 'Ja, erneuern und die bisherige sperren' }).click();
    const rotated = await entry.getByRole('region', { name: 'Zugangsdatei für Altkasse' }).getByLabel('Inhalt der Datei Altkasse.creds').inputValue();
    const access = await named('Altkasse');
    t.match(access.nats, { reissueRequired: false, account: /^A/ }, 'it has an account of its own now');
    t.equal(await readsConsumer(rotated, access.nats), true, 'and the new file reads its consumer');
    await note.waitFor({ state: 'detached' });
    t.match(await entry.textContent(), /NATS-Konto/, 'the entry names its account instead');
    await svc.request('DELETE', `${p}/integrations/${made.body.id}`, { token });
  });

  t.test("lists a webhook's deliveries after a sale with their results in words, and sends one again", async (t) => {
    const hook = await named('Warenwirtschaft');
    // The receiver fails the first request, lets the next one time out, then takes everything.
    receiver.failNext('/erp', 1, 500);
    const created = await fx.createProcess();
    t.equal(created.status, 201, 'a sale begins');
    await settled(async () => receiver.received('/erp').length, (n) => n >= 1);
    receiver.failNext('/erp', 1, 'hang');
    await patchPos(svc, fx.tokens.pricing, created.body.id, { state: 'processing', processedBy: 'kasse-1' });
    await patchPos(svc, fx.tokens.pricing, created.body.id, { state: 'successful' });
    const done = await settled(() => deliveries(hook.id), (d) => d.some((x) => x.eventType === 'order.final' && x.status === '200') && d.some((x) => x.status === 'timeout'));
    t.ok(done.some((d) => d.status === '500') && done.some((d) => d.status === 'timeout'), 'a refused and a timed-out attempt among them');
    const final = receiver.received('/erp').find((r) => r.answer === 200 && r.body.includes('"order.final"'))!;
    t.match(new Webhook(webhookSecret).verify(final.body, final.headers as Record<string, string>), { type: 'order.final' }, 'signed with the secret the screen showed');

    const entry = page.getByRole('article', { name: 'Warenwirtschaft' });
    await entry.getByRole('button', { name: 'Zustellungen anzeigen (Warenwirtschaft)' }).click();
    const list = entry.getByRole('region', { name: 'Zustellungen an Warenwirtschaft' });
    await list.getByRole('button', { name: 'Zustellungen neu laden (Warenwirtschaft)' }).click();
    const rows = list.getByRole('row');
    const [shownRows, attempts] = await settled(async () => [(await rows.count()) - 1, (await deliveries(hook.id)).length], ([a, b]) => a === b);
    t.equal(shownRows, attempts, 'a row per attempt under its header');
    const text = (await list.textContent()) ?? '';
    for (const words of ['zugestellt (HTTP 200)', 'abgelehnt (HTTP 500)', 'keine Antwort (Zeitüberschreitung)']) t.ok(text.includes(words), `shows "${words}"`);
    t.ok(text.includes(`${attempts} Zustellversuche, die neuesten zuerst`), 'counted in words');
    t.match(text, /\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}:\d{2}/, 'times in the German form');
    await assertAccessible(t, page, 'deliveries');
    await entry.evaluate((element) => element.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'integrations');

    const finalRows = list.getByRole('row').filter({ hasText: 'order.final' });
    const attemptsOfFinal = await finalRows.count();
    const before = receiver.received('/erp').filter((r) => r.headers['webhook-id'] === final.headers['webhook-id']).length;
    const again = list.getByRole('button', { name: /^Erneut senden \(order\.final vom / });
    t.equal(await again.count(), 1, "one button for the event, at its newest attempt");
    await again.click();
    await list.getByText('order.final wird erneut gesendet').waitFor();
    await settled(() => finalRows.count(), (n) => n > attemptsOfFinal);
    t.equal(await finalRows.count(), attemptsOfFinal + 1, 'the new attempt is listed');
    t.match(await finalRows.first().textContent(), new RegExp(`order\\.final.*${attemptsOfFinal + 1}zugestellt \\(HTTP 200\\)`), 'newest first, with its number and result');
    t.equal(receiver.received('/erp').filter((r) => r.headers['webhook-id'] === final.headers['webhook-id']).length, before + 1, 'the receiver got it again, under the same webhook-id');

    // Older attempts than fit one page (25): the next page by the list's link, and back.
    await svc.sql`
      insert into webhook_attempts (project, integration_id, event_id, event_type, attempt, at, status, duration_ms, response)
      select ${p.slice(1)}, ${hook.id}, 'evt-older-' || lpad(i::text, 2, '0'), 'coupon.deleted', 1, now() - interval '1 hour' - i * interval '1 minute', '503', 3, 'older'
      from generate_series(1, 40) i`;
    await list.getByRole('button', { name: 'Zustellungen neu laden (Warenwirtschaft)' }).click();
    const counted = async () => Number(/(\d+) Zustellversuche, die neuesten zuerst/.exec((await list.textContent()) ?? '')?.[1] ?? 0);
    const total = await settled(counted, (n) => n >= attempts + 1 + 40);
    const rowTexts = async () => (await list.getByRole('row').allTextContents()).slice(1);
    const firstPage = await rowTexts();
    await list.getByRole('button', { name: 'Nächste Seite' }).click();
    await list.getByText(`Seite 2 von ${Math.ceil(total / 25)}`).waitFor();
    const secondPage = await settled(rowTexts, (rows) => rows.length > 0 && rows[0] !== firstPage[0]);
    t.equal(firstPage.length, 25, 'the first page holds 25');
    t.equal(secondPage.length, Math.min(25, total - 25), 'the second the next ones');
    t.same(secondPage.filter((row) => firstPage.includes(row)), [], 'none of the first page again');
    await list.getByRole('button', { name: 'Vorherige Seite' }).click();
    await list.getByText(`Seite 1 von ${Math.ceil(total / 25)}`).waitFor();
    await list.getByRole('row').filter({ hasText: 'order.final' }).first().waitFor();
    t.pass('back on the first page, with the newest');
    await svc.sql`delete from webhook_attempts where event_id like 'evt-older-%'`;
    await list.getByRole('button', { name: 'Zustellungen neu laden (Warenwirtschaft)' }).click();
  });

  t.test("disables a webhook (saying why; nothing is sent again) and enables it again", async (t) => {
    const entry = page.getByRole('article', { name: 'Warenwirtschaft' });
    await entry.getByRole('button', { name: 'Deaktivieren (Warenwirtschaft)' }).click();
    await entry.getByText('deaktiviert – von Hand deaktiviert').waitFor();
    t.match(await named('Warenwirtschaft'), { state: 'disabled', disabledReason: 'disabled by the owner' }, 'disabled in the API');
    const list = entry.getByRole('region', { name: 'Zustellungen an Warenwirtschaft' });
    await list.getByText('Der Webhook ist deaktiviert').waitFor();
    t.ok(await list.getByRole('button', { name: /^Erneut senden \(order\.final/ }).isDisabled(), 'nothing is sent again while disabled');
    await assertAccessible(t, page, 'a disabled webhook');

    await entry.getByRole('button', { name: 'Aktivieren (Warenwirtschaft)' }).click();
    await entry.getByRole('button', { name: 'Deaktivieren (Warenwirtschaft)' }).waitFor();
    t.match(await entry.textContent(), /Statusaktiv/, 'active again');
    t.match(await named('Warenwirtschaft'), { state: 'active' }, 'active in the API');
    t.notOk((await named('Warenwirtschaft')).disabledReason, 'with no reason left');
    t.ok(await list.getByRole('button', { name: /^Erneut senden \(order\.final/ }).isEnabled(), 'events can be sent again');
  });

  t.test('says in words why the platform disabled a webhook that kept failing', async (t) => {
    receiver.failAlways('/old', 503);
    const made = await svc.request('POST', `${p}/integrations`, { token, body: { name: 'Altsystem', kind: 'webhook', url: `${receiver.url}/old`, events: ['order.final'] } });
    t.equal(made.status, 201, 'a webhook whose receiver keeps failing');
    await fx.processIn('successful');
    await settled(() => named('Altsystem'), (i) => i.state === 'disabled');
    await page.reload();
    const entry = page.getByRole('article', { name: 'Altsystem' });
    t.ok(await appears(entry.getByText(/^deaktiviert – abgeschaltet nach 3 fehlgeschlagenen Zustellungen in Folge seit \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}; zuletzt: abgelehnt \(HTTP 503\)$/)), 'the reason in words');
    t.match(await entry.textContent(), /Ereignisseorder\.final/, 'a single event type as given');
    await entry.getByRole('button', { name: 'Aktivieren (Altsystem)' }).waitFor();
    receiver.recover('/old');
  });

  t.test('deletes an integration only after asking; cancelling keeps it', async (t) => {
    const entry = page.getByRole('article', { name: 'Kasse 3' });
    const remove = entry.getByRole('button', { name: 'Löschen (Kasse 3)' });
    await remove.click();
    const dialog = page.getByRole('dialog', { name: 'Integration Kasse 3 löschen?' });
    t.match(await dialog.textContent(), /sofort auf allen NATS-Servern gesperrt/, 'says what ends');
    await dialog.getByRole('button', { name: 'Nicht löschen' }).click();
    await dialog.waitFor({ state: 'hidden' });
    t.ok(await named('Kasse 3'), 'kept without the yes');
    const access = await named('Kasse 3');
    t.equal(await readsConsumer(creds, access.nats), true, 'its file still works');

    await remove.click();
    await dialog.getByRole('button', { name: 'Ja, Integration löschen' }).click();
    await entry.waitFor({ state: 'detached' });
    t.notOk(await named('Kasse 3'), 'deleted after the yes');
    t.match(await page.getByRole('region', { name: 'Integrationen des Projekts' }).textContent(), /2 Integrationen/, 'two left');
  });

  t.test('in English, on a phone', async (t) => {
    const phone = await newPortalPage(browser, svc, { locale: 'en-GB', viewport: Viewports.phone });
    await signInThroughPortal(phone.page, owner, 'en');
    await phone.page.getByRole('link', { name: 'Integrations' }).click();
    const entry = phone.page.getByRole('article', { name: 'Altsystem' });
    await entry.waitFor();
    t.match(await phone.page.getByRole('region', { name: "The project's integrations" }).textContent(), /2 integrations/, 'counted in English');
    t.match(await entry.textContent(), /KindWebhookStatedisabled – switched off after 3 failed deliveries in a row since \d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}; the last: refused \(HTTP 503\)/, 'why it is disabled, in English');
    const hook = phone.page.getByRole('article', { name: 'Warenwirtschaft' });
    t.match(await hook.textContent(), /EventsTill \(all\), Orders \(all\)/, 'event areas in English');
    await hook.getByRole('button', { name: 'Show deliveries (Warenwirtschaft)' }).click();
    const list = hook.getByRole('region', { name: 'Deliveries to Warenwirtschaft' });
    await list.getByText('no answer (timed out)').first().waitFor();
    await phone.page.getByRole('radio', { name: /^NATS access/ }).check();
    await phone.page.getByRole('button', { name: 'Create NATS access' }).waitFor();
    await assertFitsWidth(t, phone.page, 'integrations on a phone');
    await assertAccessible(t, phone.page, 'integrations in English on a phone');
    await phone.context.close();
  });
}
