import { describe, expect, it } from 'vitest';
import { COMMAND_TYPES } from '../../domain/commands/command-catalog.ts';
import { PROTOCOLS } from '../routes/vehicles.ts';
import { CONSOLE_CONTENT_SECURITY_POLICY, consoleRoutes } from './console-routes.ts';

const body = (html: string) => /<body([^>]*)>/.exec(html)![1]!;

describe('the console page', () => {
  it('hands its scripts the protocols and command types the API takes, and no tile server when none is set', async () => {
    const response = await consoleRoutes().request('/');
    const attributes = body(await response.text());
    expect(attributes).toContain(`data-protocols="${PROTOCOLS.join(',')}"`);
    expect(PROTOCOLS).toEqual(expect.arrayContaining(['teltonika', 'osmand']));
    expect(attributes).toContain(`data-command-types="${COMMAND_TYPES.join(',')}"`);
    expect(attributes).not.toContain('data-tile-url');
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
  });

  it('with a tile server, hands over its template and attribution (as text) and lets images come from its origin alone', async () => {
    const response = await consoleRoutes({ url: 'https://tiles.example.com:8443/{z}/{x}/{y}.png', attribution: '© "Tiles" <b>' }).request('/');
    const attributes = body(await response.text());
    expect(attributes).toContain('data-tile-url="https://tiles.example.com:8443/{z}/{x}/{y}.png"');
    expect(attributes).toContain('data-tile-attribution="© &quot;Tiles&quot; &lt;b&gt;"');
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toContain("img-src 'self' data: https://tiles.example.com:8443;");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("connect-src 'self';");
  });
});
