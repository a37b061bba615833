/**
 * A token count for text the model reads (discovery lines, tool schemas) without a tokenizer on
 * the serving path: o200k takes ~3 characters per token over generated tool names with digits,
 * more over prose (measured in `bench/discovery` with gpt-tokenizer), so 2.5 characters per token
 * errs on the high side.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 2.5);
}
