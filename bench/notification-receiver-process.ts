import { startMailReceiver, startSmsReceiver } from './notification-receivers.ts';

/**
 * The mail server and SMS gateway of the events bench, in a process of their own as they would be on
 * their own machines: the chatty SMTP exchange does not wait on the server's event loop twice. Tells
 * its parent `{ ready: { email, sms } }` (SMTP_URL, SMS_URL); on `'collect'` answers
 * `{ arrivals: { email, sms } }` and exits.
 */
const email = await startMailReceiver();
const sms = await startSmsReceiver();
process.on('message', (message) => {
  if (message !== 'collect') return;
  void (async () => {
    const arrivals = { email: await email.arrivals(), sms: await sms.arrivals() };
    await Promise.all([email.close(), sms.close()]);
    process.send!({ arrivals }, () => process.exit(0));
  })();
});
process.send!({ ready: { email: email.url, sms: sms.url } });
