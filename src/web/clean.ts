// Text an agent or a user wrote, made fit to show as text: ANSI escape sequences (colours, cursor moves,
// titles) are removed, any other control character but tab and newline becomes U+FFFD. Pure: no DOM. The
// page never turns such text into markup; this only keeps terminal noise off the screen.

// CSI (ESC [ … final byte), OSC (ESC ] … BEL or ESC \), and the two-byte escapes.
const ANSI =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]|\u009b[0-?]*[ -/]*[@-~]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: see above
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function cleanText(text: string): string {
  return text.replace(ANSI, "").replace(CONTROL, "\ufffd");
}
