// My notifications: where the notifications the account's rules send me arrive (my email, Telegram
// chat, phone), muting them for a while, this browser's notifications (web push) and the browsers
// subscribed, and the reports emailed to me. Every signed-in user has it.
import { epochOf, instantOfLocal, localInputValue, timeText } from './api-time.js';
import { problemText } from './console-api.js';
import { confirmDialog, errorLine, field, h, notify, table } from './dom.js';
import { CHANNEL_NAMES } from './notification-rule-form.js';
import { isThisBrowser, pushUnavailable, subscribeThisBrowser, unsubscribeThisBrowser } from './push-browser.js';
import { drawReportSubscriptions } from './report-subscriptions.js';

/** Muted now: muted, and not only until a time already past (then notifications have resumed by themselves). */
const mutedNow = (c) => c.muted && (!c.mutedUntil || epochOf(c.mutedUntil) > Date.now());

const offBadge = (on) => (on ? null : h('span', { class: 'badge' }, 'not configured on this server'));

/** The form of my addresses and muting. */
function channelsForm(channels, { api, session }, redraw) {
  const timeZone = session.user.timezone;
  const email = h('input', { type: 'email', value: channels.email ?? '', autocomplete: 'email', placeholder: session.user.email });
  const telegram = h('input', { type: 'text', value: channels.telegramChatId ?? '', autocomplete: 'off', spellcheck: 'false', inputmode: 'numeric' });
  const phone = h('input', { type: 'tel', value: channels.phone ?? '', autocomplete: 'tel', placeholder: '+525512345678' });
  const muted = h('input', { type: 'checkbox', id: 'my-muted', checked: channels.muted });
  const until = h('input', { type: 'datetime-local', value: localInputValue(channels.mutedUntil) });
  const untilField = field('Muted until', until, `Empty: until you unmute. Read in your time zone, ${timeZone}.`);
  const follow = () => { untilField.hidden = !muted.checked; };
  muted.addEventListener('change', follow);
  follow();
  const error = errorLine();
  const { available } = channels;
  const emailField = field('Email for notifications', email, `Empty: your sign-in email. Now: ${channels.effectiveEmail ?? session.user.email}.`);
  emailField.querySelector('label').append(' ', offBadge(available.email) ?? '');
  const telegramField = field('Telegram chat id', telegram, 'Send any message to the server\'s Telegram bot first; the chat id is the number of your chat with it.');
  telegramField.querySelector('label').append(' ', offBadge(available.telegram) ?? '');
  const phoneField = field('Phone for SMS', phone, 'In international form (E.164): a +, the country code and the number.');
  phoneField.querySelector('label').append(' ', offBadge(available.sms) ?? '');

  return h('form', { class: 'form card', 'aria-label': 'Where my notifications go', onsubmit: async (event) => {
    event.preventDefault();
    error.clear();
    const body = {
      email: email.value.trim() || null,
      telegramChatId: telegram.value.trim() || null,
      phone: phone.value.replaceAll(/[\s-]/g, '') || null,
      muted: muted.checked,
      mutedUntil: muted.checked && until.value ? instantOfLocal(until.value, timeZone) : null,
    };
    try {
      await api.patch('/users/me/notification-channels', body);
      notify('Saved');
      await redraw();
    } catch (failure) {
      error.show(problemText(failure));
    }
  } },
  emailField, telegramField, phoneField,
  h('div', { class: 'check' }, muted, ' ', h('label', { for: muted.id }, 'Mute all my notifications')),
  untilField,
  error.node,
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Save')));
}

/** This browser's notifications: the button (or why there is none) and the browsers subscribed. */
function pushSection(channels, { api }, redraw) {
  const why = pushUnavailable(channels);
  const error = errorLine();
  const button = h('button', { type: 'button', class: 'primary', onclick: async () => {
    error.clear();
    button.disabled = true;
    try {
      await subscribeThisBrowser(api, channels.vapidPublicKey);
      notify('This browser now gets your notifications');
      await redraw();
    } catch (failure) {
      error.show(problemText(failure));
    } finally {
      button.disabled = false;
    }
  } }, 'Get notifications in this browser');

  async function remove(s) {
    const sure = await confirmDialog({ title: 'Remove this browser?', body: `${s.userAgent ?? 'This browser'} gets no more notifications.`, confirmLabel: 'Remove', danger: true });
    if (!sure) return;
    try {
      await api.delete(`/users/me/push-subscriptions/${s.id}`);
      if (isThisBrowser(s.id)) await unsubscribeThisBrowser().catch(() => {});
      notify('Browser removed');
      await redraw();
    } catch (failure) {
      error.show(problemText(failure));
    }
  }

  return h('section', { 'aria-labelledby': 'push-heading' },
    h('h2', { id: 'push-heading' }, 'Notifications in the browser'),
    why ? h('p', { class: 'hint', id: 'push-unavailable' }, why) : h('div', { class: 'actions' }, button),
    error.node,
    table('Browsers that get my notifications', [
      { label: 'Browser', cell: (s) => [s.userAgent ?? 'unknown', isThisBrowser(s.id) ? ' ' : null, isThisBrowser(s.id) ? h('span', { class: 'badge ok' }, 'this one') : null] },
      { label: 'Since', cell: (s) => timeText(s.createdAt) },
      { label: '', cell: (s) => h('button', { type: 'button', 'aria-label': `Remove ${s.userAgent ?? 'browser'} ${s.id}`, onclick: () => remove(s) }, 'Remove') },
    ], channels.pushSubscriptions, 'No browser yet.'));
}

export async function render(main, ctx) {
  const { api, can } = ctx;
  const status = h('div');
  const form = h('div');
  const push = h('div');
  const reports = h('section', { 'aria-label': 'Reports by email' });
  main.append(h('p', { class: 'intro' }, 'The account\'s notification rules send you messages on the channels they name; here you say where they arrive.'),
    status, h('h2', {}, 'Where my notifications go'), form, push, can('reports:read') ? reports : null);

  async function draw() {
    const channels = (await api.get('/users/me/notification-channels')).data;
    status.replaceChildren(h('p', {}, 'On this server: ', Object.entries(CHANNEL_NAMES).flatMap(([channel, label], i) => [
      i ? ', ' : '', label, ' ', channels.available[channel] ? h('span', { class: 'badge ok' }, 'on') : h('span', { class: 'badge' }, 'off'),
    ]), '.', mutedNow(channels) ? [' ', h('strong', {}, `Muted${channels.mutedUntil ? ` until ${timeText(channels.mutedUntil)}` : ''}.`)] : null));
    form.replaceChildren(channelsForm(channels, ctx, draw));
    push.replaceChildren(pushSection(channels, ctx, draw));
  }
  await draw();
  if (can('reports:read')) await drawReportSubscriptions(reports, ctx);
}
