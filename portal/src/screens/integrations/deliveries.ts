import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { Pagination, ProjectApi } from '../../api.js';
import { useFormat } from '../../format.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Loading, Pager, useLoad } from '../../ui.js';
import { isDelivered, useIntegrationNames } from './names.js';

interface Delivery {
  eventId: string;
  eventType: string;
  attempt: number;
  at: string;
  status: string;
  durationMs: number;
  response: string;
}

interface DeliveryPage {
  deliveries: Delivery[];
  pagination: Pagination;
  links: { nextPage?: { href: string } };
}

const words = {
  de: {
    title: 'Zustellungen an {name}',
    count: { one: '{n} Zustellversuch, der neueste zuerst', other: '{n} Zustellversuche, die neuesten zuerst' },
    none: 'Noch keine Zustellung. Sie erscheinen hier, sobald ein Ereignis gesendet wurde.',
    at: 'Zeitpunkt',
    event: 'Ereignis',
    attempt: 'Versuch',
    result: 'Ergebnis',
    duration: 'Dauer',
    response: 'Antwort des Empfängers',
    action: 'Aktion',
    ms: '{n} ms',
    again: 'Erneut senden',
    againFor: '{type} vom {time}',
    queued: '{type} wird erneut gesendet; der neue Versuch erscheint gleich oben in der Liste.',
    disabled: 'Der Webhook ist deaktiviert: aktivieren Sie ihn, um Ereignisse erneut zu senden.',
    refresh: 'Zustellungen neu laden',
    page: 'Seite {page} von {pages}',
  },
  en: {
    title: 'Deliveries to {name}',
    count: { one: '{n} delivery attempt, newest first', other: '{n} delivery attempts, newest first' },
    none: 'No delivery yet. They appear here once an event was sent.',
    at: 'When',
    event: 'Event',
    attempt: 'Attempt',
    result: 'Result',
    duration: 'Duration',
    response: "The receiver's answer",
    action: 'Action',
    ms: '{n} ms',
    again: 'Send again',
    againFor: '{type} of {time}',
    queued: '{type} is being sent again; the new attempt appears at the top of the list shortly.',
    disabled: 'The webhook is disabled: enable it to send events again.',
    refresh: 'Reload deliveries',
    page: 'Page {page} of {pages}',
  },
};

const PerPage = 25;
/** The list follows new attempts by itself while it is open. */
const RefreshMs = 5_000;
/** How much of an answer a row shows; the rest opens on demand. */
const ShortResponse = 60;

/**
 * A webhook's delivery attempts, newest first, paged: when, which event, which attempt, the result in
 * words, how long it took and the start of the receiver's answer. Each event's newest attempt on the
 * page can be sent again (a new attempt, the same webhook-id). The list pages by key: a page after
 * the first is asked with the `after` its predecessor's links.nextPage carried, kept here per page
 * so that going back asks the same page again (and new attempts never shift the pages after the first).
 */
export function DeliveryList({ api, id, name, active, titleId }: { api: ProjectApi; id: string; name: string; active: boolean; titleId: string }) {
  const t = useWords(words);
  const f = useFormat();
  const names = useIntegrationNames();
  const [page, setPage] = useState(0);
  // The `after` of each page known so far (the first page has none).
  const [cursors, setCursors] = useState<string[]>(['']);
  const after = cursors[page] ?? '';
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>();
  const list = useLoad(
    (signal) => api.get<DeliveryPage>(`/integrations/${id}/deliveries?perPage=${PerPage}${page > 0 ? `&page=${page}&after=${encodeURIComponent(after)}` : ''}`, { signal }),
    [api, id, page, after],
  );
  const nextHref = list.data?.links.nextPage?.href;
  useEffect(() => {
    const next = nextHref ? new URL(nextHref, window.location.origin).searchParams.get('after') : null;
    if (next) setCursors((known) => (known[page + 1] === next ? known : [...known.slice(0, page + 1), next]));
  }, [nextHref, page]);
  useEffect(() => {
    const timer = setInterval(list.reload, RefreshMs);
    return () => clearInterval(timer);
  }, [list.reload]);

  const sendAgain = (d: Delivery) => async () => {
    setError(undefined);
    setNotice('');
    try {
      await api.send('POST', `/integrations/${id}/deliveries/${encodeURIComponent(d.eventId)}/redeliver`);
      setNotice(t('queued', { type: d.eventType }));
      setTimeout(list.reload, 1_000);
    } catch (err) {
      setError(err);
    }
  };

  const data = list.data;
  const seen = new Set<string>();
  return html`<section class="deliveries" aria-labelledby=${titleId}>
    <h4 id=${titleId}>${t('title', { name })}</h4>
    <div class="toolbar">
      <span class="muted">${data ? t('count', { n: data.pagination.totalItems }) : ''}</span>
      <button type="button" class="secondary" onClick=${list.reload}>${t('refresh')}<span class="sr-only"> (${name})</span></button>
    </div>
    <${Loading} when=${list.loading && !data} />
    <${ErrorMessage} error=${list.error ?? error} />
    ${active ? null : html`<p class="hint">${t('disabled')}</p>`}
    <p role="status" class="one-time">${notice}</p>
    ${data && !data.deliveries.length ? html`<p>${t('none')}</p>` : null}
    ${data?.deliveries.length
      ? html`<table class="deliveries">
          <thead><tr>
            <th scope="col">${t('at')}</th><th scope="col">${t('event')}</th><th scope="col" class="num">${t('attempt')}</th><th scope="col">${t('result')}</th>
            <th scope="col" class="num">${t('duration')}</th><th scope="col">${t('response')}</th><th scope="col">${t('action')}</th>
          </tr></thead>
          <tbody>
            ${data.deliveries.map((d) => {
              const newest = !seen.has(d.eventId);
              seen.add(d.eventId);
              const time = `${f.date(d.at)}, ${f.time(d.at)}`;
              return html`<tr key=${`${d.eventId}:${d.attempt}`}>
                <td>${time}</td>
                <td class="event"><span class="mono">${d.eventType}</span><br /><span class="hint mono">${d.eventId}</span></td>
                <td class="num">${d.attempt}</td>
                <td class=${isDelivered(d.status) ? 'ok' : 'error-text'}>${names.deliveryStatus(d.status)}</td>
                <td class="num">${t('ms', { n: f.number(d.durationMs) })}</td>
                <td class="mono response">${d.response.length > ShortResponse ? html`<details><summary>${d.response.slice(0, ShortResponse)} …</summary>${d.response}</details>` : d.response}</td>
                <td>
                  ${newest
                    ? html`<button type="button" class="secondary" disabled=${!active} onClick=${sendAgain(d)}>${t('again')}<span class="sr-only"> (${t('againFor', { type: d.eventType, time })})</span></button>`
                    : null}
                </td>
              </tr>`;
            })}
          </tbody>
        </table>`
      : null}
    ${data
      ? html`<${Pager} page=${page} pages=${data.links.nextPage && cursors[page + 1] ? Math.max(data.pagination.totalPages, page + 2) : page + 1}
          label=${t('page', { page: page + 1, pages: data.pagination.totalPages })} onPage=${setPage} />`
      : null}
  </section>`;
}
