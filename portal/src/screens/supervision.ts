import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ProjectApi } from '../api.js';
import { useEventStream } from '../events.js';
import { useFormat } from '../format.js';
import { useWords } from '../i18n.js';
import { useNames } from '../names.js';
import { ConfirmButton, ErrorMessage, Loading, useId } from '../ui.js';
import type { ScreenProps } from './index.js';
import { ShopPicker } from './shop-picker.js';

/**
 * Supervision: the checkout processes of a shop that wait for a supervisor (an age check, a forced
 * control), live: the list is loaded once the shop's events are followed, and each event adds,
 * updates or removes a process. The supervisor sees whose it is (the app's device and user), how
 * long it has waited, the cart and the required age, and confirms the check or, after a second
 * question, refuses the purchase (its payment fails).
 */
interface Check {
  id: string;
  type: string;
  requiredAge?: number;
  state: string;
}

interface LineItem {
  id: string;
  type: string;
  name: string;
  amount: number;
  totalPrice: number;
  saleRestriction?: string;
}

interface Process {
  id: string;
  createdAt: string;
  clientID: string;
  appUserID: string;
  paymentState: string;
  aborted: boolean;
  routingTarget: string;
  checks: Check[];
  currency: string;
  pricing?: { lineItems: LineItem[]; price: { price: number } };
}

interface ProcessEvent {
  id: string;
  event: string;
  process: Omit<Process, 'pricing'> & { shopID: string };
}

const words = {
  de: {
    waiting: { one: '{n} Vorgang wartet auf Sie', other: '{n} Vorgänge warten auf Sie' },
    none: 'Kein Vorgang wartet auf eine Aufsicht.',
    fresh: '{n} neu',
    seen: 'Gesehen',
    arrived: 'Neuer Vorgang wartet: {what}',
    title: '{check} · Gerät {device}',
    unknown: 'unbekannt',
    appUser: 'App-Nutzer',
    waited: 'Wartet seit',
    arrivedAt: 'angekommen {time}',
    payment: 'Zahlung',
    seconds: { one: '{n} Sekunde', other: '{n} Sekunden' },
    minutes: { one: '{n} Minute', other: '{n} Minuten' },
    hours: { one: '{n} Stunde', other: '{n} Stunden' },
    item: 'Artikel',
    amount: 'Menge',
    price: 'Preis',
    total: 'Summe',
    approveAge: 'Alter bestätigt',
    approveControl: 'Kontrolle bestanden',
    reject: 'Kauf ablehnen',
    rejectTitle: 'Kauf ablehnen?',
    rejectText: 'Der Einkauf an Gerät {device} ({total}) endet ohne Zahlung; die App sagt es dem Kunden. Das lässt sich nicht rückgängig machen.',
    rejectConfirm: 'Ja, Kauf ablehnen',
    keep: 'Nicht ablehnen',
    cart: 'Warenkorb',
    isNew: 'Neu',
  },
  en: {
    waiting: { one: '{n} process waits for you', other: '{n} processes wait for you' },
    none: 'No process waits for a supervisor.',
    fresh: '{n} new',
    seen: 'Seen',
    arrived: 'A new process waits: {what}',
    title: '{check} · device {device}',
    unknown: 'unknown',
    appUser: 'App user',
    waited: 'Waiting for',
    arrivedAt: 'arrived {time}',
    payment: 'Payment',
    seconds: { one: '{n} second', other: '{n} seconds' },
    minutes: { one: '{n} minute', other: '{n} minutes' },
    hours: { one: '{n} hour', other: '{n} hours' },
    item: 'Item',
    amount: 'Quantity',
    price: 'Price',
    total: 'Total',
    approveAge: 'Age confirmed',
    approveControl: 'Control passed',
    reject: 'Refuse purchase',
    rejectTitle: 'Refuse the purchase?',
    rejectText: 'The purchase on device {device} ({total}) ends without payment; the app tells the customer. This cannot be undone.',
    rejectConfirm: 'Yes, refuse purchase',
    keep: 'Keep the purchase',
    cart: 'Cart',
    isNew: 'New',
  },
};

const ShopKey = 'portal.supervision.shop';
const waits = (p: Pick<Process, 'routingTarget' | 'aborted' | 'paymentState'>) => p.routingTarget === 'supervisor' && !p.aborted && (p.paymentState === 'pending' || p.paymentState === 'processing');

export function Supervision({ api }: ScreenProps) {
  const t = useWords(words);
  const names = useNames();
  const [shop, setShop] = useState(localStorage.getItem(ShopKey) ?? '');
  const [waiting, setWaiting] = useState<Process[]>([]);
  // Whether the chosen shop's list has been read since its events are streamed: until then (also
  // before the shop picker chose a shop) the screen cannot say that nothing waits, and a process
  // that read lists was not announced as new.
  const [listed, setListed] = useState(false);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [announcement, setAnnouncement] = useState('');
  const [error, setError] = useState<unknown>();

  // ShopPicker calls this for another shop only: the same shop again keeps its stream (starting over
  // would wait for a ready that never comes).
  const chooseShop = (id: string) => {
    localStorage.setItem(ShopKey, id);
    setShop(id);
    setWaiting([]);
    setListed(false);
    setFresh(new Set());
  };

  const describe = (p: Pick<Process, 'checks' | 'clientID'>) =>
    t('title', {
      check: p.checks
        .filter((c) => c.state === 'pending')
        .map(names.check)
        .join(', '),
      device: p.clientID || t('unknown'),
    });

  useEventStream(
    shop ? api.url(`/checkout/events?shop=${encodeURIComponent(shop)}`) : null,
    {
      onReady: async () => {
        try {
          const { processes } = await api.get<{ processes: Process[] }>(`/checkout/process?shop=${encodeURIComponent(shop)}&limit=1000`);
          setWaiting(processes.filter(waits).sort((a, b) => a.createdAt.localeCompare(b.createdAt)));
          setListed(true);
          setError(undefined);
        } catch (err) {
          setError(err);
        }
      },
      onEvent: async (_type, data) => {
        const { process } = data as ProcessEvent;
        if (!waits(process)) {
          setWaiting((list) => list.filter((p) => p.id !== process.id));
          return;
        }
        const full = await api.get<Process>(`/checkout/process/${process.id}`).catch(() => undefined);
        if (!full || !waits(full)) return;
        let added = false;
        setWaiting((list) => {
          added = !list.some((p) => p.id === full.id);
          return added ? [...list, full] : list.map((p) => (p.id === full.id ? full : p));
        });
        if (added) {
          setFresh((s) => new Set(s).add(full.id));
          setAnnouncement(t('arrived', { what: describe(full) }));
        }
      },
    },
    ['checkout'],
  );

  useEffect(() => {
    const base = document.title.replace(/^\(\d+\) /, '');
    document.title = fresh.size ? `(${fresh.size}) ${base}` : base;
  }, [fresh.size]);

  const done = (id: string) => {
    setWaiting((list) => list.filter((p) => p.id !== id));
    setFresh((s) => {
      const next = new Set(s);
      next.delete(id);
      return next;
    });
  };

  return html`<div class="supervision">
    <div class="toolbar">
      <${ShopPicker} api=${api} value=${shop} onChange=${chooseShop} />
      ${fresh.size ? html`<span class="badge" aria-hidden="true">${t('fresh', { n: fresh.size })}</span><button type="button" class="secondary" onClick=${() => setFresh(new Set())}>${t('seen')}</button>` : null}
    </div>
    <p class="sr-only" role="status" aria-live="polite">${announcement}</p>
    <${ErrorMessage} error=${error} />
    <${Loading} when=${Boolean(shop) && !listed} />
    ${listed ? html`<p>${waiting.length ? t('waiting', { n: waiting.length }) : t('none')}</p>` : null}
    <div class="cards">
      ${waiting.map((p) => html`<${WaitingProcess} key=${p.id} api=${api} process=${p} isNew=${fresh.has(p.id)} title=${describe(p)} onDone=${() => done(p.id)} />`)}
    </div>
  </div>`;
}

/** One process that waits: for whom, since when, what must be checked, the cart, and the supervisor's two answers. */
function WaitingProcess({ api, process, isNew, title, onDone }: { api: ProjectApi; process: Process; isNew: boolean; title: string; onDone(): void }) {
  const t = useWords(words);
  const f = useFormat();
  const names = useNames();
  const heading = useId('process');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const act = (run: () => Promise<unknown>) => async () => {
    setBusy(true);
    setError(undefined);
    try {
      await run();
      onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const path = `/checkout/process/${process.id}`;
  const lines = (process.pricing?.lineItems ?? []).filter((l) => l.type !== 'promotion' || l.totalPrice !== 0);
  const total = f.money(process.pricing?.price.price, process.currency);
  const ageCheck = process.checks.some((c) => c.state === 'pending' && c.type === 'min_age');

  return html`<article class=${`card${isNew ? ' new' : ''}`} aria-labelledby=${heading}>
    <h2 id=${heading}>${title}${isNew ? html` <span class="badge">${t('isNew')}</span>` : null}</h2>
    <dl class="facts">
      <dt>${t('appUser')}</dt><dd class="mono">${process.appUserID || t('unknown')}</dd>
      <dt>${t('waited')}</dt><dd><${WaitedFor} since=${process.createdAt} /> <span class="muted">(${t('arrivedAt', { time: f.time(process.createdAt) })})</span></dd>
      <dt>${t('payment')}</dt><dd>${names.paymentState(process.paymentState)}</dd>
    </dl>
    <table>
      <caption class="sr-only">${t('cart')}</caption>
      <thead><tr><th scope="col">${t('item')}</th><th scope="col" class="num">${t('amount')}</th><th scope="col" class="num">${t('price')}</th></tr></thead>
      <tbody>
        ${lines.map((l) => {
          const restriction = names.saleRestriction(l.saleRestriction);
          return html`<tr><td>${l.name}${restriction ? html` <small>(${restriction})</small>` : null}</td><td class="num">${l.amount}</td><td class="num">${f.money(l.totalPrice, process.currency)}</td></tr>`;
        })}
      </tbody>
      <tfoot><tr><th scope="row" colspan="2">${t('total')}</th><td class="num">${total}</td></tr></tfoot>
    </table>
    <${ErrorMessage} error=${error} />
    <div class="actions">
      <button type="button" disabled=${busy} onClick=${act(() => api.send('POST', `${path}/approval`, { type: 'supervisor' }))}>${ageCheck ? t('approveAge') : t('approveControl')}</button>
      <${ConfirmButton} label=${t('reject')} question=${t('rejectTitle')} text=${t('rejectText', { device: process.clientID || t('unknown'), total })} yes=${t('rejectConfirm')} no=${t('keep')}
        disabled=${busy} onConfirm=${act(() => api.send('PATCH', path, { paymentState: 'failed' }))} />
    </div>
  </article>`;
}

/** How long a process has waited, counted on every second while it is shown. */
function WaitedFor({ since }: { since: string }) {
  const t = useWords(words);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const seconds = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  let text: string;
  if (seconds < 60) text = t('seconds', { n: seconds });
  else if (minutes < 60) text = t('minutes', { n: minutes });
  else text = minutes % 60 ? `${t('hours', { n: hours })} ${t('minutes', { n: minutes % 60 })}` : t('hours', { n: hours });
  return html`<time datetime=${`PT${seconds}S`}>${text}</time>`;
}
