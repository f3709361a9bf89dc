/**
 * Control characters a terminal acts on: C0 (escape, bell, carriage return, newline…), DEL and
 * C1 (e.g. U+009B, a one-character CSI).
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * One line of text for a terminal, with every control character written as an escape
 * (`\x1b`, `\u009b`): names and reasons taken from imported files or packages cannot move the
 * cursor, recolour, retitle the window or start a new line that looks like the command's own.
 */
export function terminalLine(text: string): string {
  return text.replace(CONTROL, (character) => {
    const code = character.charCodeAt(0);
    return code < 0x80
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** Lines for a terminal, each escaped by terminalLine, joined and ended with a newline. */
export function terminalLines(lines: readonly string[]): string {
  return lines.map(terminalLine).join("\n") + "\n";
}
