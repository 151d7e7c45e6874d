import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { ProjectApi } from '../../api.js';
import { useFormat } from '../../format.js';
import { useWords } from '../../i18n.js';
import { ConfirmButton, ErrorMessage, useAction, useId } from '../../ui.js';
import { DeliveryList } from './deliveries.js';
import { useIntegrationNames, type CreatedIntegration, type Integration } from './names.js';
import { OneTimeSecret } from './one-time-secret.js';

const words = {
  de: {
    kind: 'Art',
    state: 'Status',
    url: 'Adresse',
    events: 'Ereignisse',
    filter: 'Filter',
    filterAll: '{subject} (alle Ereignisse des Projekts)',
    consumer: 'Consumer',
    account: 'NATS-Konto',
    reissue: 'Diese Zugangsdatei stammt aus der Zeit, bevor jede Integration ein eigenes NATS-Konto bekam, und verbindet nicht mehr. Erneuern Sie sie, um eine neue zu erhalten; der Consumer und seine Stelle bleiben.',
    created: 'Angelegt',
    rotateNats: 'Zugangsdatei erneuern',
    rotateNatsQuestion: 'Zugangsdatei von {name} erneuern?',
    rotateNatsText: 'Die bisherige Datei wird sofort auf allen NATS-Servern gesperrt; ein damit verbundenes System wird getrennt, bis es die neue Datei verwendet. Die neue Datei wird nur einmal angezeigt.',
    rotateNatsYes: 'Ja, erneuern und die bisherige sperren',
    rotateWebhook: 'Signiergeheimnis erneuern',
    rotateWebhookQuestion: 'Signiergeheimnis von {name} erneuern?',
    rotateWebhookText: 'Das neue Geheimnis wird nur einmal angezeigt. Das bisherige signiert noch 24 Stunden mit, damit der Empfänger in Ruhe umstellen kann.',
    rotateWebhookYes: 'Ja, neues Geheimnis',
    rotateNo: 'Nicht erneuern',
    disable: 'Deaktivieren',
    enable: 'Aktivieren',
    showDeliveries: 'Zustellungen anzeigen',
    remove: 'Löschen',
    removeQuestion: 'Integration {name} löschen?',
    removeNatsText: 'Die Zugangsdatei wird sofort auf allen NATS-Servern gesperrt und der Consumer entfernt. Das lässt sich nicht rückgängig machen.',
    removeWebhookText: 'Der Empfänger bekommt keine Ereignisse mehr, und die Liste seiner Zustellungen wird gelöscht. Das lässt sich nicht rückgängig machen.',
    removeYes: 'Ja, Integration löschen',
    removeNo: 'Nicht löschen',
  },
  en: {
    kind: 'Kind',
    state: 'State',
    url: 'Address',
    events: 'Events',
    filter: 'Filter',
    filterAll: "{subject} (all of the project's events)",
    consumer: 'Consumer',
    account: 'NATS account',
    reissue: 'This credentials file was issued before each integration had a NATS account of its own, and no longer connects. Rotate it to get a new one; the consumer and its place stay.',
    created: 'Created',
    rotateNats: 'Rotate credentials file',
    rotateNatsQuestion: 'Rotate the credentials file of {name}?',
    rotateNatsText: 'The file so far is revoked on every NATS server at once; a system connected with it is cut off until it uses the new file. The new file is shown only once.',
    rotateNatsYes: 'Yes, rotate and revoke the old one',
    rotateWebhook: 'Rotate signing secret',
    rotateWebhookQuestion: 'Rotate the signing secret of {name}?',
    rotateWebhookText: 'The new secret is shown only once. The secret so far keeps signing for 24 hours beside it, so that the receiver can switch over.',
    rotateWebhookYes: 'Yes, new secret',
    rotateNo: 'Do not rotate',
    disable: 'Disable',
    enable: 'Enable',
    showDeliveries: 'Show deliveries',
    remove: 'Delete',
    removeQuestion: 'Delete the integration {name}?',
    removeNatsText: 'Its credentials file is revoked on every NATS server at once and its consumer removed. This cannot be undone.',
    removeWebhookText: 'The receiver gets no more events, and the list of its deliveries is deleted. This cannot be undone.',
    removeYes: 'Yes, delete integration',
    removeNo: 'Keep the integration',
  },
};

/**
 * One integration: what it is and where it points, and what the owner can do with it. Rotating
 * (which revokes a NATS credential at once) and deleting ask first; a webhook is disabled and enabled
 * again, and its deliveries open below it. A rotation's new secret is shown here, this once.
 */
export function IntegrationEntry({ api, integration: i, onChanged }: { api: ProjectApi; integration: Integration; onChanged(): void }) {
  const t = useWords(words);
  const f = useFormat();
  const names = useIntegrationNames();
  const [rotated, setRotated] = useState<CreatedIntegration | null>(null);
  const [deliveries, setDeliveries] = useState(false);
  const { error, run } = useAction(onChanged);
  const ids = { title: useId('integration'), deliveries: useId('deliveries') };
  const webhook = i.kind === 'webhook';
  const active = i.state === 'active';
  const forName = html`<span class="sr-only"> (${i.name})</span>`;

  const rotate = run(async () => setRotated(await api.send<CreatedIntegration>('POST', `/integrations/${i.id}/rotate`)));
  const setState = (state: 'active' | 'disabled') => run(() => api.send('PATCH', `/integrations/${i.id}`, { state }));
  const remove = run(() => api.send('DELETE', `/integrations/${i.id}`));
  const rotating = webhook
    ? ({ label: 'rotateWebhook', question: 'rotateWebhookQuestion', text: 'rotateWebhookText', yes: 'rotateWebhookYes' } as const)
    : ({ label: 'rotateNats', question: 'rotateNatsQuestion', text: 'rotateNatsText', yes: 'rotateNatsYes' } as const);

  return html`<article class="integration" aria-labelledby=${ids.title}>
    <h3 id=${ids.title}>${i.name}</h3>
    <dl class="facts">
      <dt>${t('kind')}</dt><dd>${names.kind(i.kind)}</dd>
      <dt>${t('state')}</dt>
      <dd class=${active ? 'ok' : 'error-text'}>${names.state(i.state)}${i.disabledReason ? ` – ${names.disabledReason(i.disabledReason)}` : ''}</dd>
      ${webhook
        ? html`<dt>${t('url')}</dt><dd class="mono">${i.url}</dd><dt>${t('events')}</dt><dd>${names.events(i.events)}</dd>`
        : null}
      ${i.nats
        ? html`<dt>${t('filter')}</dt><dd class="mono">${i.filter === '>' ? t('filterAll', { subject: i.nats.filterSubject }) : i.nats.filterSubject}</dd>
            <dt>${t('consumer')}</dt><dd class="mono">${i.nats.stream} / ${i.nats.consumer}</dd>
            ${i.nats.account ? html`<dt>${t('account')}</dt><dd class="mono">${i.nats.account}</dd>` : null}`
        : null}
      <dt>${t('created')}</dt><dd>${f.dateTime(i.createdAt)}</dd>
    </dl>
    ${i.nats?.reissueRequired ? html`<p class="warning" role="status">${t('reissue')}</p>` : null}
    <div class="actions">
      <${ConfirmButton} label=${html`${t(rotating.label)}${forName}`} question=${t(rotating.question, { name: i.name })} text=${t(rotating.text)}
        yes=${t(rotating.yes)} no=${t('rotateNo')} onConfirm=${rotate} />
      ${webhook
        ? html`<button type="button" class="secondary" onClick=${setState(active ? 'disabled' : 'active')}>${t(active ? 'disable' : 'enable')}${forName}</button>
            <button type="button" class="secondary" aria-expanded=${deliveries ? 'true' : 'false'} aria-controls=${deliveries ? ids.deliveries : undefined}
              onClick=${() => setDeliveries(!deliveries)}>${t('showDeliveries')}${forName}</button>`
        : null}
      <${ConfirmButton} label=${html`${t('remove')}${forName}`} question=${t('removeQuestion', { name: i.name })} text=${t(webhook ? 'removeWebhookText' : 'removeNatsText')}
        yes=${t('removeYes')} no=${t('removeNo')} onConfirm=${remove} />
    </div>
    <${ErrorMessage} error=${error} />
    <${OneTimeSecret} created=${rotated} onHide=${() => setRotated(null)} />
    ${webhook && deliveries ? html`<div id=${ids.deliveries}><${DeliveryList} api=${api} id=${i.id} name=${i.name} active=${active} titleId=${`${ids.deliveries}-title`} /></div>` : null}
  </article>`;
}
