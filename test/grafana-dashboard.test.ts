import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
// Importing the metric modules registers their metrics in prom-client's global registry, as a server does.
import '../api/http-metrics.ts';
import '../db/pool-metrics.ts';
import '../engine/engine-metrics.ts';
import '../ingest/ingest-metrics.ts';
import { collectProcessMetrics, metricsRegistry } from '../runtime/metrics.ts';

/**
 * The Grafana dashboard (deploy/grafana/dashboards/fleetcore.json), its provisioning and the compose
 * `monitoring` profile against the code: every metric and label a query names is one the code
 * exports, every fleetcore metric is on the dashboard, the data source is the provisioned one, and
 * the compose services mount files that exist. Nothing here needs Docker.
 */
const root = resolve(import.meta.dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

const DASHBOARD_PATH = 'deploy/grafana/dashboards/fleetcore.json';
const DATASOURCE_PATH = 'deploy/grafana/provisioning/datasources/prometheus.yml';
const PROVIDER_PATH = 'deploy/grafana/provisioning/dashboards/fleetcore.yml';
const PROMETHEUS_PATH = 'deploy/prometheus/prometheus.yml';

/** fleetcore metrics the dashboard deliberately leaves out, with why. Empty: it shows them all. */
const NOT_ON_DASHBOARD: Record<string, string> = {};

/** Labels Prometheus attaches to every scraped series; a metric's own label of that name becomes exported_<name>. */
const TARGET_LABELS = ['job', 'instance'];

interface Panel {
  id?: unknown;
  type: string;
  title?: string;
  gridPos?: { h: number; w: number; x: number; y: number };
  datasource?: { type?: string; uid?: string } | null;
  targets?: Array<{ refId?: string; expr?: string; legendFormat?: string; datasource?: { type?: string; uid?: string } }>;
  panels?: Panel[];
  collapsed?: boolean;
}

interface Variable {
  name: string;
  type: string;
  query?: unknown;
  definition?: string;
  datasource?: { type?: string; uid?: string };
  current?: { value?: unknown };
}

interface Dashboard {
  uid?: string;
  title?: string;
  schemaVersion?: number;
  panels: Panel[];
  templating?: { list: Variable[] };
}

interface KnownMetric {
  family: string;
  type: string;
  labels: string[];
}

/** Every series name the process exports (histograms as _bucket, _sum and _count), with its family, type and labels. */
const series = new Map<string, KnownMetric>();

beforeAll(async () => {
  collectProcessMetrics();
  for (const metric of await metricsRegistry.getMetricsAsJSON()) {
    const single = metricsRegistry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] } | undefined;
    const known: KnownMetric = { family: metric.name, type: String(metric.type), labels: [...(single?.labelNames ?? [])] };
    const names = known.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => metric.name + s)
      : known.type === 'summary' ? [metric.name, `${metric.name}_sum`, `${metric.name}_count`]
      : [metric.name];
    for (const name of names) series.set(name, known);
  }
});

// ------------------------------------------------------------------------------------------------
// The dashboard and its queries

const dashboard = JSON.parse(read(DASHBOARD_PATH)) as Dashboard;

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

const panels = allPanels(dashboard.panels);
const variables = dashboard.templating?.list ?? [];
const queryVariables = variables.filter((v) => v.type === 'query');

/** Every PromQL query of the dashboard: panel targets and query variables, with where it is. */
const queries: Array<{ where: string; expr: string; legend?: string }> = [
  ...panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel ${String(panel.id)} "${panel.title}" ${target.refId}`, expr: target.expr ?? '', legend: target.legendFormat }))),
  ...queryVariables.map((v) => ({ where: `variable $${v.name}`, expr: typeof v.query === 'string' ? v.query : (v.query as { query?: string })?.query ?? '' })),
];

/**
 * The query with each string literal replaced by `"<n>"`, its index in `strings`: label values and
 * regexes are then never read as names, and their brackets never count.
 */
function protect(expr: string): { text: string; strings: string[] } {
  const strings: string[] = [];
  const text = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, (literal) => `"${strings.push(literal.slice(1, -1)) - 1}"`);
  return { text, strings };
}

const withoutStrings = (expr: string) => protect(expr).text;

const METRIC_PREFIXED = /\b(?:fleetcore|process|nodejs)_[A-Za-z0-9_:]*/g;
const SELECTOR = /\b([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}/g;
const MATCHER = /([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)/g;
const GROUPING = /\b(?:by|without)\s*\(([^)]*)\)/g;
const RATED = /\b(?:rate|irate|increase)\s*\(\s*([A-Za-z_:][A-Za-z0-9_:]*)/g;
const LEGEND_LABEL = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

function metricNames(expr: string): string[] {
  const bare = withoutStrings(expr);
  const names = new Set(bare.match(METRIC_PREFIXED) ?? []);
  for (const [, name] of bare.matchAll(SELECTOR)) names.add(name!);
  return [...names];
}

/** The labels a series of `name` has in Prometheus: its own (renamed where they clash with the target's), the target's, and `le` for buckets. */
function labelsInPrometheus(name: string): string[] {
  const known = series.get(name);
  if (!known) return [];
  const own = known.labels.map((label) => (TARGET_LABELS.includes(label) ? `exported_${label}` : label));
  return [...own, ...TARGET_LABELS, ...(name.endsWith('_bucket') ? ['le'] : [])];
}

/** Labels a query makes up with label_replace(v, "dst", "replacement", "src", "regex"): its last four arguments are strings. */
function madeUpLabels(expr: string): string[] {
  const { text, strings } = protect(expr);
  return calls(text, 'label_replace').flatMap((call) => {
    const args = [...call.matchAll(/"(\d+)"/g)].map((m) => strings[Number(m[1])]!);
    return args.length >= 4 ? [args[args.length - 4]!] : [];
  });
}

function groupingLabels(expr: string): string[] {
  return [...withoutStrings(expr).matchAll(GROUPING)].flatMap(([, list]) => list!.split(',').map((l) => l.trim()).filter(Boolean));
}

/** The text of each call `fn(...)` in `text` (a query through protect()), up to its closing parenthesis. */
function calls(text: string, fn: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(new RegExp(`\\b${fn}\\s*\\(`, 'g'))) {
    let depth = 0;
    for (let i = match.index + match[0].length - 1; i < text.length; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')' && --depth === 0) {
        found.push(text.slice(match.index, i + 1));
        break;
      }
    }
  }
  return found;
}

function balanced(expr: string): boolean {
  const closing: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const stack: string[] = [];
  for (const c of withoutStrings(expr)) {
    if ('([{'.includes(c)) stack.push(c);
    else if (c in closing && stack.pop() !== closing[c]) return false;
  }
  return stack.length === 0;
}

// ------------------------------------------------------------------------------------------------
// Provisioning, Prometheus and compose files, read as text (no YAML parser in the project)

/** The value of the first `key: value` line (quotes dropped). */
function yamlValue(text: string, key: string): string | undefined {
  const match = new RegExp(`^\\s*-?\\s*${key}:\\s*["']?([^"'#\\n]*?)["']?\\s*(?:#.*)?$`, 'm').exec(text);
  return match?.[1]?.trim();
}

const datasourceYaml = read(DATASOURCE_PATH);
const providerYaml = read(PROVIDER_PATH);
const prometheusYaml = read(PROMETHEUS_PATH);
const compose = read('docker-compose.yml');
const provisionedUid = yamlValue(datasourceYaml, 'uid');

/** The compose file's services, each as the lines of its block (indentation kept). */
function composeServices(text: string): Map<string, string[]> {
  const services = new Map<string, string[]>();
  let inServices = false;
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    if (/^\S/.test(line) && !line.startsWith('#')) {
      inServices = /^services:\s*$/.test(line);
      current = undefined;
      continue;
    }
    if (!inServices) continue;
    const service = /^ {2}([A-Za-z0-9._-]+):\s*$/.exec(line);
    if (service) services.set(service[1]!, (current = []));
    else if (current && line.trim() !== '' && !/^ {0,2}#/.test(line)) current.push(line);
  }
  return services;
}

const services = composeServices(compose);

/** A service's bind mounts `./host:/container[:ro]`. */
function bindMounts(block: string[]): Array<{ host: string; container: string }> {
  return block
    .map((line) => /^\s*-\s*["']?(\.{1,2}\/[^:"']+):([^:"']+)(?::(?:ro|rw))?["']?\s*$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ host: m[1]!, container: m[2]! }));
}

/** The host file or directory that a container path of `service` comes from, through its bind mounts. */
function hostPathOf(service: string, containerPath: string): string | undefined {
  for (const { host, container } of bindMounts(services.get(service) ?? [])) {
    if (containerPath === container) return join(root, host);
    if (containerPath.startsWith(`${container}/`)) return join(root, host, posix.relative(container, containerPath));
  }
  return undefined;
}

function serviceEnv(service: string, key: string): string | undefined {
  return yamlValue((services.get(service) ?? []).join('\n'), key);
}

// ------------------------------------------------------------------------------------------------

describe('the Grafana dashboard', () => {
  it('is a Grafana 11 dashboard with the expected rows, unique panel ids and a sane grid', () => {
    expect(dashboard.uid).toMatch(/^[A-Za-z0-9_-]{1,40}$/);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(dashboard.schemaVersion).toBeLessThanOrEqual(41);
    const ids = panels.map((p) => p.id);
    for (const id of ids) expect(Number.isInteger(id), `panel id ${String(id)}`).toBe(true);
    expect(new Set(ids).size, 'panel ids are unique').toBe(ids.length);
    const rows = panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual(expect.arrayContaining(['Trackers & ingest', 'Engine', 'Webhooks', 'API', 'Database & process']));

    // Top-level panels of expanded rows share one grid: inside 24 columns and never on top of each other.
    const placed = dashboard.panels.filter((p) => p.gridPos);
    for (const p of placed) {
      const { x, y, w, h } = p.gridPos!;
      expect(x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= 24, `panel ${String(p.id)} gridPos`).toBe(true);
    }
    for (const [i, a] of placed.entries()) {
      for (const b of placed.slice(i + 1)) {
        const A = a.gridPos!, B = b.gridPos!;
        const overlap = A.x < B.x + B.w && B.x < A.x + A.w && A.y < B.y + B.h && B.y < A.y + A.h;
        expect(overlap, `panels ${String(a.id)} and ${String(b.id)} overlap`).toBe(false);
      }
    }
    for (const p of panels.filter((panel) => panel.type !== 'row')) {
      expect(p.targets?.length, `panel ${String(p.id)} "${p.title}" has queries`).toBeGreaterThan(0);
      const refIds = p.targets!.map((t) => t.refId);
      expect(new Set(refIds).size, `panel ${String(p.id)} refIds`).toBe(refIds.length);
    }
  });

  it('queries the provisioned Prometheus through its data source variable', () => {
    expect(provisionedUid).toBeTruthy();
    const variable = variables.find((v) => v.type === 'datasource');
    expect(variable, 'a data source variable').toBeDefined();
    expect(variable!.query).toBe('prometheus');
    expect(variable!.current?.value, 'the variable defaults to the provisioned data source').toBe(provisionedUid);
    const reference = { type: 'prometheus', uid: `\${${variable!.name}}` };
    for (const p of panels.filter((panel) => panel.type !== 'row')) {
      expect(p.datasource, `panel ${String(p.id)} "${p.title}"`).toEqual(reference);
      for (const t of p.targets ?? []) if (t.datasource) expect(t.datasource, `panel ${String(p.id)} ${t.refId}`).toEqual(reference);
    }
    for (const v of queryVariables) expect(v.datasource, `variable $${v.name}`).toEqual(reference);
    // The provisioned data source is Prometheus, at the compose service of that name.
    expect(yamlValue(datasourceYaml, 'type')).toBe('prometheus');
    const url = new URL(yamlValue(datasourceYaml, 'url')!);
    expect(services.has(url.hostname), `${url.hostname} is a compose service`).toBe(true);
  });

  it('names only metrics the code exports, and rates only counters and histogram series', () => {
    expect(series.size).toBeGreaterThan(30);
    expect(queries.length).toBeGreaterThan(30);
    for (const { where, expr } of queries) {
      expect(expr.trim(), `${where}: empty query`).not.toBe('');
      expect(balanced(expr), `${where}: unbalanced brackets in ${expr}`).toBe(true);
      const names = metricNames(expr);
      expect(names.length, `${where}: no metric in ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(series.has(name), `${where}: ${name} is not a metric of the code`).toBe(true);
      for (const [, name] of withoutStrings(expr).matchAll(RATED)) {
        const known = series.get(name!);
        const counterLike = known && (known.type === 'counter' || (name !== known.family && /_(bucket|sum|count)$/.test(name!)));
        expect(counterLike, `${where}: rate() over ${name}, which is not a counter`).toBe(true);
      }
      for (const call of calls(withoutStrings(expr), 'histogram_quantile')) {
        const buckets = metricNames(call).filter((n) => n.endsWith('_bucket'));
        expect(buckets.length, `${where}: histogram_quantile without a _bucket series`).toBeGreaterThan(0);
        for (const b of buckets) expect(series.get(b)?.type, `${where}: ${b}`).toBe('histogram');
        expect(groupingLabels(call), `${where}: histogram_quantile must keep le`).toContain('le');
      }
    }
  });

  it('names only labels those metrics have, as Prometheus stores them', () => {
    for (const { where, expr, legend } of queries) {
      const bare = withoutStrings(expr);
      const names = metricNames(expr);
      for (const [, name, matchers] of bare.matchAll(SELECTOR)) {
        for (const [, label] of matchers!.matchAll(MATCHER)) {
          expect(labelsInPrometheus(name!), `${where}: ${name} has no label ${label}`).toContain(label);
        }
      }
      const made = madeUpLabels(expr);
      const available = new Set([...names.flatMap(labelsInPrometheus), ...made]);
      const grouped = groupingLabels(expr);
      for (const label of grouped) expect(available.has(label), `${where}: no metric of ${expr} has label ${label}`).toBe(true);
      // A metric's own `job` label is `exported_job` once scraped: grouping by `job` would mean the scrape job.
      for (const name of names) {
        for (const clash of (series.get(name)?.labels ?? []).filter((l) => TARGET_LABELS.includes(l))) {
          expect(grouped, `${where}: ${name}'s ${clash} label is exported_${clash} in Prometheus`).not.toContain(clash);
        }
      }
      const shown = grouped.length > 0 ? new Set([...grouped, ...made]) : available;
      for (const [, label] of (legend ?? '').matchAll(LEGEND_LABEL)) {
        expect(shown.has(label!), `${where}: legend {{${label}}} is not a label of ${expr}`).toBe(true);
      }
    }
  });

  it('exports no metric with a label Prometheus sets itself (job, instance), which it would rename', () => {
    for (const [name, metric] of series) {
      expect(metric.labels.filter((l) => TARGET_LABELS.includes(l)), `${name} has a target label`).toEqual([]);
    }
  });

  it('shows every fleetcore metric the code exports', () => {
    const used = new Set(queries.flatMap(({ expr }) => metricNames(expr)).map((name) => series.get(name)?.family));
    const families = [...new Set([...series.values()].map((m) => m.family))].filter((f) => f.startsWith('fleetcore_'));
    const missing = families.filter((family) => !used.has(family) && !(family in NOT_ON_DASHBOARD));
    expect(missing, 'fleetcore metrics with no panel (add one, or list them in NOT_ON_DASHBOARD with why)').toEqual([]);
    for (const family of Object.keys(NOT_ON_DASHBOARD)) expect(families, `NOT_ON_DASHBOARD names ${family}`).toContain(family);
  });
});

describe('Prometheus, Grafana provisioning and the compose monitoring profile', () => {
  it('are YAML without tabs, and the dashboard is valid JSON', () => {
    for (const [path, text] of [[DATASOURCE_PATH, datasourceYaml], [PROVIDER_PATH, providerYaml], [PROMETHEUS_PATH, prometheusYaml], ['docker-compose.yml', compose]] as const) {
      expect(text.includes('\t'), `${path} has a tab`).toBe(false);
    }
    expect(() => JSON.parse(read(DASHBOARD_PATH))).not.toThrow();
  });

  it('starts prometheus and grafana only with --profile monitoring, on pinned images', () => {
    for (const name of ['postgis', 'redis', 'fleetcore', 'prometheus', 'grafana']) expect(services.has(name), `service ${name}`).toBe(true);
    const inProfile = (profile: string) =>
      [...services].filter(([, block]) => block.some((l) => new RegExp(`^ {4}profiles:\\s*\\[\\s*["']?${profile}["']?\\s*\\]\\s*$`).test(l))).map(([name]) => name);
    const profiled = [...services].filter(([, block]) => block.some((l) => /^ {4}profiles:/.test(l))).map(([name]) => name);
    expect(inProfile('monitoring').sort()).toEqual(['grafana', 'prometheus']);
    // The only other profile is the local cluster's, whose services are all named for it.
    for (const name of profiled.filter((n) => !inProfile('monitoring').includes(n))) {
      expect(inProfile('cluster'), `${name} is in the cluster profile`).toContain(name);
      expect(name).toMatch(/^cluster-/);
    }
    // The default services stay outside every profile.
    for (const name of ['postgis', 'redis', 'fleetcore']) expect(profiled).not.toContain(name);
    expect(serviceEnv('prometheus', 'image')).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(serviceEnv('grafana', 'image')).toMatch(/^grafana\/grafana:11\.\d+\.\d+$/);
  });

  it('mounts Prometheus configuration and Grafana provisioning from files in the repository', () => {
    for (const name of ['prometheus', 'grafana']) {
      const mounts = bindMounts(services.get(name)!);
      expect(mounts.length, `${name} bind mounts`).toBeGreaterThan(0);
      for (const { host } of mounts) expect(existsSync(join(root, host)), `${name} mounts ${host}`).toBe(true);
    }
    // Prometheus reads the configuration it is told to.
    const configFile = /--config\.file=(\S+)/.exec(services.get('prometheus')!.join('\n'))?.[1] ?? '/etc/prometheus/prometheus.yml';
    expect(hostPathOf('prometheus', configFile)).toBe(join(root, PROMETHEUS_PATH));

    // Grafana's provisioning directories hold these files, and the provider's path holds the dashboard.
    expect(hostPathOf('grafana', '/etc/grafana/provisioning/datasources/prometheus.yml')).toBe(join(root, DATASOURCE_PATH));
    expect(hostPathOf('grafana', '/etc/grafana/provisioning/dashboards/fleetcore.yml')).toBe(join(root, PROVIDER_PATH));
    expect(yamlValue(providerYaml, 'type')).toBe('file');
    const providerPath = yamlValue(providerYaml, 'path')!;
    const dashboards = hostPathOf('grafana', providerPath);
    expect(dashboards, `${providerPath} is mounted into grafana`).toBeDefined();
    expect(statSync(dashboards!).isDirectory()).toBe(true);
    expect(existsSync(join(dashboards!, posix.basename(DASHBOARD_PATH)))).toBe(true);
    const home = serviceEnv('grafana', 'GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH');
    if (home) expect(hostPathOf('grafana', home)).toBe(join(root, DASHBOARD_PATH));
  });

  it('scrapes the fleetcore service where it serves /metrics, under the job the dashboard selects', () => {
    const job = yamlValue(prometheusYaml, 'job_name');
    expect(job).toBe('fleetcore');
    expect(yamlValue(prometheusYaml, 'scrape_interval')).toBe('5s');
    const metricsPath = yamlValue(prometheusYaml, 'metrics_path');
    if (metricsPath) expect(metricsPath).toBe('/metrics');
    const targets = /targets:\s*\[([^\]]*)\]/.exec(prometheusYaml)?.[1]?.split(',').map((t) => t.trim().replace(/^["']|["']$/g, '')) ?? [];
    expect(targets.length).toBeGreaterThan(0);
    // /metrics is on METRICS_PORT when the service sets one, else on its HTTP port.
    const port = serviceEnv('fleetcore', 'METRICS_PORT') ?? serviceEnv('fleetcore', 'PORT') ?? '3000';
    for (const target of targets) expect(target).toBe(`fleetcore:${port}`);
    const jobVariable = variables.find((v) => v.name === 'job');
    expect(jobVariable?.current?.value, 'the dashboard selects the scrape job by default').toBe(job);
  });
});
