import { useFormat } from '../../format.js';
import { fillWords, pluralForm, useLanguage, type Language } from '../../i18n.js';
import { named } from '../../names.js';

/**
 * What the integrations screen shows of the API's integrations (GET /integrations), and the words for
 * their codes: kinds, states, why one is disabled, event types, delivery results. A code the portal
 * does not know is shown as given.
 */
export interface Integration {
  id: string;
  name: string;
  kind: string;
  state: string;
  disabledReason?: string;
  createdAt: string;
  filter?: string;
  nats?: { stream: string; consumer: string; inboxPrefix: string; filterSubject: string; account?: string; reissueRequired?: boolean };
  url?: string;
  /** null: every event type. */
  events?: string[] | null;
}

/** A create's or rotate's answer: the credential (nats) or signing secret (webhook), given this once. */
export interface CreatedIntegration extends Integration {
  creds?: string;
  secret?: string;
}

/** The event domains a webhook can ask for (`<domain>.*`), in the order the picker shows them. */
export const EventDomains = ['checkout', 'pos', 'order', 'fulfillment', 'closing', 'promotion', 'coupon'] as const;

interface Names {
  kinds: Record<string, string>;
  states: Record<string, string>;
  domains: Record<string, string>;
  /** What each domain's events are about. */
  domainHints: Record<string, string>;
  allEvents: string;
  allOfDomain: string;
  byOwner: string;
  failing: { one: string; other: string };
  delivered: string;
  refused: string;
  statuses: Record<string, string>;
}

const words: Record<Language, Names> = {
  de: {
    kinds: { webhook: 'Webhook', nats: 'NATS-Zugang' },
    states: { active: 'aktiv', disabled: 'deaktiviert' },
    domains: { checkout: 'Einkäufe', pos: 'Kasse', order: 'Bestellungen', fulfillment: 'Warenausgabe', closing: 'Abschlüsse', promotion: 'Aktionen', coupon: 'Gutscheine' },
    domainHints: {
      checkout: 'jeder Schritt eines Einkaufs in der App: angelegt, freigegeben, bezahlt, abgebrochen',
      pos: 'die Sicht der Kasse: neu, übernommen, bezahlt, fehlgeschlagen',
      order: 'abgeschlossen, abgebrochen, Zahlung fehlgeschlagen, von der TSE signiert',
      fulfillment: 'jeder Zustand einer Warenausgabe',
      closing: 'Tagesabschlüsse und ihre Dateien',
      promotion: 'Aktionskonfigurationen angelegt, geändert, aktiviert',
      coupon: 'Gutscheine geändert, gelöscht, eingelöst',
    },
    allEvents: 'alle Ereignisse',
    allOfDomain: '{domain} (alle)',
    byOwner: 'von Hand deaktiviert',
    failing: {
      one: 'abgeschaltet nach {n} fehlgeschlagenen Zustellung seit {time}; zuletzt: {last}',
      other: 'abgeschaltet nach {n} fehlgeschlagenen Zustellungen in Folge seit {time}; zuletzt: {last}',
    },
    delivered: 'zugestellt (HTTP {status})',
    refused: 'abgelehnt (HTTP {status})',
    statuses: { timeout: 'keine Antwort (Zeitüberschreitung)', connection_failed: 'keine Verbindung (abgewiesen, abgebrochen oder Ziel nicht erlaubt)' },
  },
  en: {
    kinds: { webhook: 'Webhook', nats: 'NATS access' },
    states: { active: 'active', disabled: 'disabled' },
    domains: { checkout: 'Checkouts', pos: 'Till', order: 'Orders', fulfillment: 'Fulfillment', closing: 'Closings', promotion: 'Promotions', coupon: 'Coupons' },
    domainHints: {
      checkout: 'every step of a checkout in the app: created, approved, paid, cancelled',
      pos: "the till's view: new, taken over, paid, failed",
      order: 'completed, cancelled, payment failed, signed by the TSE',
      fulfillment: 'every state of a fulfillment',
      closing: 'daily closings and their files',
      promotion: 'promotion configurations created, changed, activated',
      coupon: 'coupons changed, deleted, redeemed',
    },
    allEvents: 'all events',
    allOfDomain: '{domain} (all)',
    byOwner: 'disabled by hand',
    failing: {
      one: 'switched off after {n} failed delivery since {time}; the last: {last}',
      other: 'switched off after {n} failed deliveries in a row since {time}; the last: {last}',
    },
    delivered: 'delivered (HTTP {status})',
    refused: 'refused (HTTP {status})',
    statuses: { timeout: 'no answer (timed out)', connection_failed: 'no connection (refused, broken off or destination not allowed)' },
  },
};

/** The reasons the API writes (actors/webhooks/sql.ts, actors/integrations/handler.ts); others are shown as given. */
const ByOwner = 'disabled by the owner';
const Failing = /^(\d+) deliveries in a row failed, since (\S+); the last: (\S+)/;

/** A delivery's status that says it arrived: a 2xx answer. */
export const isDelivered = (status: string) => /^2\d\d$/.test(status);

export function useIntegrationNames() {
  const language = useLanguage();
  const n = words[language];
  const f = useFormat();
  const deliveryStatus = (status: string) =>
    isDelivered(status) ? fillWords(n.delivered, { status }) : /^\d{3}$/.test(status) ? fillWords(n.refused, { status }) : named(n.statuses, status);
  return {
    kind: (code: string) => named(n.kinds, code),
    state: (code: string) => named(n.states, code),
    domain: (domain: string) => named(n.domains, domain),
    domainHint: (domain: string) => named(n.domainHints, domain),
    /** A webhook's event types: "alle Ereignisse", or each (`order.*`: "Bestellungen (alle)"; one type as given). */
    events(events: string[] | null | undefined): string {
      if (!events) return n.allEvents;
      return events.map((type) => (type.endsWith('.*') ? fillWords(n.allOfDomain, { domain: named(n.domains, type.slice(0, -2)) }) : type)).join(', ');
    },
    /** The result of one delivery attempt: "zugestellt (HTTP 200)", "keine Antwort (Zeitüberschreitung)". */
    deliveryStatus,
    /** Why a webhook is disabled, in words where the API's reason is one the portal knows. */
    disabledReason(reason: string): string {
      if (reason === ByOwner) return n.byOwner;
      const failing = Failing.exec(reason);
      if (!failing) return reason;
      const count = Number(failing[1]);
      return fillWords(pluralForm(language, n.failing, count), { n: count, time: f.dateTime(failing[2]), last: deliveryStatus(failing[3]!) });
    },
  };
}
