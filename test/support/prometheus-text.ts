/** One sample of a Prometheus text exposition: `name{label="value",…} number`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Parses the text format strictly enough for a test to notice a broken exposition: every line is a
 * comment (`# HELP`, `# TYPE`) or a sample with a number, and every sample's metric has a TYPE.
 */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  const typed = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      typed.add(line.split(' ')[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const [, name, labelText, raw] = match;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw!.toLowerCase() !== 'nan') throw new Error(`not a number in: ${line}`);
    const family = name!.replace(/_(bucket|sum|count)$/, '');
    if (!typed.has(name!) && !typed.has(family)) throw new Error(`sample without a TYPE line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, val] of (labelText ?? '').matchAll(LABEL)) labels[key!] = val!;
    samples.push({ name: name!, labels, value });
  }
  return samples;
}

/** The value of the sample whose labels include `labels` (summed when several match), or undefined. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const matching = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.length === 0 ? undefined : matching.reduce((total, s) => total + s.value, 0);
}
