import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The README is short and sends readers to docs/; a page renamed, a heading reworded or a page left
// unlinked must fail here rather than leave a reader at a dead end. No network: external links are
// not followed, only links inside the repository.

const root = resolve(import.meta.dirname, '..');

/** GitHub's anchor for a heading: the rendered text in lower case, punctuation dropped, spaces as `-`. */
function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

interface Page {
  /** Anchors of the page's headings, duplicates numbered as GitHub does (`x`, `x-1`, `x-2`). */
  anchors: Set<string>;
  /** Link targets outside code, with the line they are on. */
  links: { target: string; line: number }[];
}

function readPage(text: string): Page {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const links: Page['links'] = [];
  let fence: string | null = null;
  text.split('\n').forEach((raw, i) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (fence) {
      if (opening && opening[1]!.startsWith(fence)) fence = null;
      return;
    }
    if (opening) {
      fence = opening[1]!;
      return;
    }
    if (/^( {4}|\t)/.test(raw)) return;
    const line = raw.replace(/(`+)[\s\S]*?\1/g, '');
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (heading) {
      const slug = githubSlug(heading[1]!);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line: i + 1 });
    const definition = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/.exec(line);
    if (definition) links.push({ target: definition[1]!, line: i + 1 });
  });
  return { anchors, links };
}

/** What is wrong with each repository-relative link of a page (empty when every one resolves). */
function brokenLinks(file: string, text: string, pageAt: (path: string) => Page | null, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  for (const { target, line } of readPage(text).links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const hash = target.indexOf('#');
    const pathPart = decodeURI(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const path = pathPart === '' ? file : pathPart.startsWith('/') ? join(root, pathPart) : resolve(dirname(file), pathPart);
    const where = `${relative(root, file)}:${line} → ${target}`;
    if (!exists(path)) {
      problems.push(`${where}: no file ${relative(root, path)}`);
      continue;
    }
    if (anchor === null || anchor === '') continue;
    const page = pageAt(path);
    if (!page) problems.push(`${where}: #${anchor} points into a file that is not Markdown`);
    else if (!page.anchors.has(anchor)) problems.push(`${where}: ${relative(root, path)} has no heading #${anchor}`);
  }
  return problems;
}

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const readme = join(root, 'README.md');
const docs = markdownUnder(join(root, 'docs')).sort();
const pages = new Map<string, Page>();
function pageAt(path: string): Page | null {
  if (!path.endsWith('.md') || !existsSync(path)) return null;
  if (!pages.has(path)) pages.set(path, readPage(readFileSync(path, 'utf8')));
  return pages.get(path)!;
}
const exists = (path: string) => existsSync(path);

describe('GitHub heading anchors', () => {
  it.each([
    ['Live: `GET /events/stream`', 'live-get-eventsstream'],
    ['Integrating (OAuth 2.0 client credentials)', 'integrating-oauth-20-client-credentials'],
    ['`vehicle.geofence.enter`', 'vehiclegeofenceenter'],
    ['The `fleet` command', 'the-fleet-command'],
    ['`POSITIONS_RETENTION_DAYS` and partitions', 'positions_retention_days-and-partitions'],
    ['Decisions where the specification says "not shown"', 'decisions-where-the-specification-says-not-shown'],
    ['Metrics: `GET /metrics`', 'metrics-get-metrics'],
  ])('%s → #%s', (heading, slug) => {
    expect(githubSlug(heading)).toBe(slug);
  });

  it('numbers repeated headings as GitHub does, and ignores headings in code blocks', () => {
    const page = readPage('# Errors\n\n```sh\n# not a heading\n```\n\n## Errors\n### Errors\n');
    expect([...page.anchors]).toEqual(['errors', 'errors-1', 'errors-2']);
  });
});

describe('the link checker', () => {
  // It must catch what it is for: a sample page with one good and three broken links.
  const file = join(root, 'docs', 'sample.md');
  const sample = [
    '# Sample',
    'See [the API](api/overview.md), [nowhere](api/missing.md), [a section](#no-such-heading),',
    'and [the top](#sample), [a lost anchor](../README.md#no-such-heading), `[code](not/a/link.md)`',
    '```md',
    '[in a code block](not/checked.md)',
    '```',
  ].join('\n');
  const fakeExists = (path: string) => [file, join(root, 'docs', 'api', 'overview.md'), readme].includes(path);
  const fakePage = (path: string) => (path === file ? readPage(sample) : path === readme ? readPage('# fleetcore\n') : null);

  it('reports a missing file, a missing heading here and a missing heading elsewhere', () => {
    const problems = brokenLinks(file, sample, fakePage, fakeExists);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/api\/missing\.md: no file docs\/api\/missing\.md/);
    expect(problems[1]).toMatch(/#no-such-heading: docs\/sample\.md has no heading/);
    expect(problems[2]).toMatch(/README\.md has no heading #no-such-heading/);
  });
});

describe('links between the README and docs/', () => {
  it('finds the docs pages', () => {
    expect(docs.length).toBeGreaterThan(0);
  });

  it.each([readme, ...docs].map((path) => [relative(root, path), path]))('every link in %s resolves', (_name, path) => {
    expect(brokenLinks(path, readFileSync(path, 'utf8'), pageAt, exists)).toEqual([]);
  });

  it('every docs page is reachable from the README', () => {
    const reached = new Set<string>([readme]);
    const queue = [readme];
    while (queue.length > 0) {
      const from = queue.shift()!;
      for (const { target } of pageAt(from)!.links) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const pathPart = decodeURI(target.split('#')[0]!);
        if (pathPart === '') continue;
        let path = pathPart.startsWith('/') ? join(root, pathPart) : resolve(dirname(from), pathPart);
        if (existsSync(path) && statSync(path).isDirectory()) path = join(path, 'README.md');
        if (path.endsWith('.md') && existsSync(path) && !reached.has(path)) {
          reached.add(path);
          queue.push(path);
        }
      }
    }
    expect(docs.filter((page) => !reached.has(page)).map((page) => relative(root, page))).toEqual([]);
  });
});
