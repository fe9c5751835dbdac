// OAuth clients (client credentials grant): the signed-in user's clients, a new one (its secret shown
// once), and revoking one with every token it was issued.
import { credentialPage } from './credential-page.js';

export const render = credentialPage({
  path: '/oauth-clients',
  noun: 'OAuth client',
  grantsField: 'scopes',
  secretField: 'clientSecret',
  idColumn: { label: 'Client id', text: (c) => c.clientId },
  intro: 'A client asks POST /oauth/token for short-lived access tokens with its client id and secret (the client credentials grant), and acts as you with at most the scopes given here.',
  secretLabel: (c) => `The secret of client ${c.clientId}.`,
});
