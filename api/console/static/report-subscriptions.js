// My report subscriptions: reports emailed to me daily or weekly (CSV attachments of the period just
// ended), a new one, pausing, resuming and removing one. Offered with reports:read; the maintenance
// report only with maintenance:read as well (the API refuses the rest).
import { problemText } from './console-api.js';
import { confirmDialog, errorLine, field, h, notify, table } from './dom.js';
import { timeText } from './api-time.js';

const REPORT_NAMES = { trips: 'Trips', geofences: 'Geofence visits', maintenance: 'Maintenance' };
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

const frequencyText = (s) => (s.frequency === 'weekly' ? `Weekly on ${WEEKDAYS[s.weekday - 1]} at ${s.time}` : `Daily at ${s.time}`);

/** The section: its form and its list, drawn into `section`. */
export async function drawReportSubscriptions(section, { api, can, session }) {
  const reports = Object.keys(REPORT_NAMES).filter((r) => r !== 'maintenance' || can('maintenance:read'));
  const listError = errorLine();
  const list = h('div');

  const frequency = h('select', {}, h('option', { value: 'daily' }, 'Daily'), h('option', { value: 'weekly' }, 'Weekly'));
  const time = h('input', { type: 'time', required: true, value: '07:00' });
  const weekday = h('select', {}, WEEKDAYS.map((name, i) => h('option', { value: String(i + 1) }, name)));
  const weekdayField = field('Weekday', weekday);
  const boxes = reports.map((report) => {
    const box = h('input', { type: 'checkbox', id: `report-${report}`, value: report, checked: report === 'trips' });
    return { report, box, item: h('div', { class: 'check' }, box, ' ', h('label', { for: box.id }, REPORT_NAMES[report])) };
  });
  const follow = () => { weekdayField.hidden = frequency.value !== 'weekly'; };
  frequency.addEventListener('change', follow);
  follow();
  const error = errorLine();
  const form = h('form', { class: 'form card', 'aria-label': 'Subscribe to a report', onsubmit: async (event) => {
    event.preventDefault();
    error.clear();
    const chosen = boxes.filter((b) => b.box.checked).map((b) => b.report);
    if (chosen.length === 0) { error.show('Choose at least one report.'); return; }
    const body = { frequency: frequency.value, reports: chosen, time: time.value, ...(frequency.value === 'weekly' ? { weekday: Number(weekday.value) } : {}) };
    try {
      await api.post('/users/me/report-subscriptions', body);
      notify('Report subscription added');
      await draw();
    } catch (failure) {
      error.show(problemText(failure));
    }
  } },
  h('h3', {}, 'Subscribe to a report'),
  h('div', { class: 'inline-form' }, field('How often', frequency), weekdayField, field('At', time)),
  h('fieldset', {}, h('legend', {}, 'Reports'), h('div', { class: 'checks' }, boxes.map((b) => b.item))),
  h('small', { class: 'hint' }, `Sent to your email for the day (or the 7 days) before, at this time in ${session.user.timezone}.`),
  error.node,
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Subscribe')));

  const act = async (work, done) => {
    listError.clear();
    try { await work(); notify(done); await draw(); } catch (failure) { listError.show(problemText(failure)); }
  };

  async function remove(s) {
    const sure = await confirmDialog({ title: 'Remove this report subscription?', body: `${frequencyText(s)}: no more of these emails.`, confirmLabel: 'Remove', danger: true });
    if (sure) await act(() => api.delete(`/users/me/report-subscriptions/${s.id}`), 'Report subscription removed');
  }

  async function draw() {
    const subscriptions = (await api.get('/users/me/report-subscriptions')).data;
    list.replaceChildren(table('My report subscriptions', [
      { label: 'When', cell: (s) => `${frequencyText(s)} (${s.timezone})` },
      { label: 'Reports', cell: (s) => s.reports.map((r) => REPORT_NAMES[r] ?? r).join(', ') },
      { label: 'Next', cell: (s) => (s.enabled === false ? 'paused' : timeText(s.nextRunAt)) },
      { label: 'Last sent', cell: (s) => timeText(s.lastRunAt) },
      { label: '', cell: (s) => h('div', { class: 'actions' },
        s.enabled === false
          ? h('button', { type: 'button', 'aria-label': `Resume ${frequencyText(s)}`, onclick: () => act(() => api.patch(`/users/me/report-subscriptions/${s.id}`, { enabled: true }), 'Resumed') }, 'Resume')
          : h('button', { type: 'button', 'aria-label': `Pause ${frequencyText(s)}`, onclick: () => act(() => api.patch(`/users/me/report-subscriptions/${s.id}`, { enabled: false }), 'Paused') }, 'Pause'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${frequencyText(s)}`, onclick: () => remove(s) }, 'Remove')) },
    ], subscriptions, 'No report subscriptions yet.'));
  }

  section.replaceChildren(h('h2', {}, 'Reports by email'), form, listError.node, list);
  await draw();
}
