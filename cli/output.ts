/** Prints a command's result: a JSON document with `--json` (for scripts), readable lines otherwise. */
export function printResult(json: boolean, data: unknown, human: string | string[]): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  } else {
    process.stdout.write(`${Array.isArray(human) ? human.join('\n') : human}\n`);
  }
}
