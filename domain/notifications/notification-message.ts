/**
 * What a person receives: the same message in each channel's form. Email takes the subject, the
 * text and HTML versions and any attachments; Telegram, SMS and web push take the short form (and
 * the link, where they can carry one).
 */
export interface NotificationMessage {
  subject: string;
  text: string;
  html: string;
  /** One or two lines: an SMS, a Telegram message, a push notification's body. */
  short: string;
  /** Where to look: the vehicle on the map. */
  url?: string;
  attachments?: Array<{ filename: string; content: string; contentType: string }>;
}
