/**
 * Trackers answer a command they refuse with text rather than a code (`Error`, `Invalid command`,
 * `Unknown command`, `Password error`, `Fail`), and no protocol here marks a refusal any other way. An
 * answer that says so fails the command, with the answer kept as its response; any other answer
 * acknowledges it. Words are matched whole, so `Success!` or `DOUT1:1 Timeout:INFINITY` never trip it.
 */
const REFUSAL = /\b(?:error|errors|fail|failed|failure|invalid|unknown command|not supported|unsupported|denied|refused|rejected)\b/i;

export function answerRefuses(text: string): boolean {
  return REFUSAL.test(text);
}
