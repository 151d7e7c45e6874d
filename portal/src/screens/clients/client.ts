import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { ProjectApi } from '../../api.js';
import { useFormat } from '../../format.js';
import { useWords } from '../../i18n.js';
import { ConfirmButton, ErrorMessage, useAction, useId } from '../../ui.js';
import { ClientSecret } from './client-secret.js';
import { useClientNames, type Client, type CreatedClient } from './names.js';

const words = {
  de: {
    kind: 'Art',
    id: 'ID',
    permissions: 'Berechtigungen',
    appRole: 'Rolle retailerApp: {permissions}, dazu die eigenen Einkäufe und Belege',
    lifetime: 'Gültigkeit eines Tokens',
    minutes: { one: '{n} Minute', other: '{n} Minuten' },
    appUsers: 'App-Nutzer',
    appUserCount: { one: '{n} App-Nutzer', other: '{n} App-Nutzer' },
    created: 'Angelegt',
    rotated: 'Geheimnis erneuert',
    previousUntil: '{time}; das vorherige gilt noch bis {until}',
    rotate: 'Geheimnis erneuern',
    rotateQuestion: 'Geheimnis von {name} erneuern?',
    rotateText: 'Das neue Geheimnis wird nur einmal angezeigt. Das bisherige gilt noch 24 Stunden, damit Apps und Systeme in Ruhe umstellen können.',
    rotateYes: 'Ja, neues Geheimnis',
    revoke: 'Erneuern und das bisherige sperren',
    revokeQuestion: 'Geheimnis von {name} erneuern und das bisherige sofort sperren?',
    revokeText: 'Wer noch das bisherige Geheimnis verwendet, bekommt ab sofort kein Token mehr (eine App in dieser Version meldet niemanden mehr an). Ausgegebene Tokens gelten bis zu ihrem Ablauf.',
    revokeYes: 'Ja, sofort sperren',
    rotateNo: 'Nicht erneuern',
    remove: 'Löschen',
    removeQuestion: '{name} löschen?',
    removeText: 'Es gibt kein Token mehr dafür, und die App-Nutzer einer App werden mit ihr gelöscht. Ausgegebene Tokens gelten bis zu ihrem Ablauf. Das lässt sich nicht rückgängig machen.',
    removeYes: 'Ja, löschen',
    removeNo: 'Nicht löschen',
  },
  en: {
    kind: 'Kind',
    id: 'Id',
    permissions: 'Permissions',
    appRole: 'Role retailerApp: {permissions}, and its own purchases and receipts',
    lifetime: 'Token lifetime',
    minutes: { one: '{n} minute', other: '{n} minutes' },
    appUsers: 'App users',
    appUserCount: { one: '{n} app user', other: '{n} app users' },
    created: 'Created',
    rotated: 'Secret rotated',
    previousUntil: '{time}; the one before is accepted until {until}',
    rotate: 'Rotate secret',
    rotateQuestion: 'Rotate the secret of {name}?',
    rotateText: 'The new secret is shown only once. The one so far is accepted for 24 more hours, so that apps and systems can switch over.',
    rotateYes: 'Yes, new secret',
    revoke: 'Rotate and revoke the old one',
    revokeQuestion: 'Rotate the secret of {name} and revoke the old one at once?',
    revokeText: 'Whoever still uses the old secret gets no token from now on (an app built with it signs nobody in any more). Tokens already issued live until they expire.',
    revokeYes: 'Yes, revoke at once',
    rotateNo: 'Do not rotate',
    remove: 'Delete',
    removeQuestion: 'Delete the client {name}?',
    removeText: 'It gets no token any more, and its app users are deleted. Tokens already issued live until they expire. This cannot be undone.',
    removeYes: 'Yes, delete client',
    removeNo: 'Keep the client',
  },
};

/**
 * One client: what it is and what its tokens may do, how many app users an app has, and what the
 * owner can do with it. Rotating (with the old secret accepted for a day, or revoked at once) and
 * deleting ask first; a rotation's new secret is shown here, this once.
 */
export function ClientEntry({ api, client: c, onChanged }: { api: ProjectApi; client: Client; onChanged(): void }) {
  const t = useWords(words);
  const f = useFormat();
  const names = useClientNames();
  const [rotated, setRotated] = useState<CreatedClient | null>(null);
  const { error, run } = useAction(onChanged);
  const title = useId('client');
  const forName = html`<span class="sr-only"> (${c.name})</span>`;
  const rotate = (revokeOldNow: boolean) => run(async () => setRotated(await api.send<CreatedClient>('POST', `/clients/${c.id}/rotate`, { revokeOldNow })));
  const permissions = c.permissions.map((p) => names.permission(p)).join(', ');
  const minutes = Math.round(c.tokenLifetimeSeconds / 60);

  return html`<article class="integration" aria-labelledby=${title}>
    <h3 id=${title}>${c.name}</h3>
    <dl class="facts">
      <dt>${t('kind')}</dt><dd>${names.kind(c.kind)}</dd>
      <dt>${t('id')}</dt><dd class="mono">${c.id}</dd>
      <dt>${t('permissions')}</dt><dd>${c.kind === 'app' ? t('appRole', { permissions }) : permissions}</dd>
      <dt>${t('lifetime')}</dt><dd>${t('minutes', { n: minutes })}</dd>
      ${c.appUsers !== undefined ? html`<dt>${t('appUsers')}</dt><dd>${t('appUserCount', { n: c.appUsers })}</dd>` : null}
      <dt>${t('created')}</dt><dd>${f.dateTime(c.createdAt)}</dd>
      ${c.rotatedAt
        ? html`<dt>${t('rotated')}</dt><dd>${c.previousSecretUntil ? t('previousUntil', { time: f.dateTime(c.rotatedAt), until: f.dateTime(c.previousSecretUntil) }) : f.dateTime(c.rotatedAt)}</dd>`
        : null}
    </dl>
    <div class="actions">
      <${ConfirmButton} label=${html`${t('rotate')}${forName}`} question=${t('rotateQuestion', { name: c.name })} text=${t('rotateText')} yes=${t('rotateYes')} no=${t('rotateNo')} onConfirm=${rotate(false)} />
      <${ConfirmButton} label=${html`${t('revoke')}${forName}`} question=${t('revokeQuestion', { name: c.name })} text=${t('revokeText')} yes=${t('revokeYes')} no=${t('rotateNo')} onConfirm=${rotate(true)} />
      <${ConfirmButton} label=${html`${t('remove')}${forName}`} question=${t('removeQuestion', { name: c.name })} text=${t('removeText')} yes=${t('removeYes')} no=${t('removeNo')}
        onConfirm=${run(() => api.send('DELETE', `/clients/${c.id}`))} />
    </div>
    <${ErrorMessage} error=${error} />
    <${ClientSecret} created=${rotated} onHide=${() => setRotated(null)} />
  </article>`;
}
