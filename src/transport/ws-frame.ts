/**
 * A WebSocket text frame as a server sends it (final, unmasked), header and
 * payload in one buffer: one socket write. `ws` writes a frame as two
 * (header, payload) corked into a writev through the stream's buffering,
 * which on the way from an LLM token to the caller costs more than a speak's
 * own work.
 */
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const head = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + length);
  frame[0] = 0x81;
  if (head === 2) {
    frame[1] = length;
  } else if (head === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    // A text frame past 4 GiB is not one Hotline sends; the high half of the length is 0.
    frame.writeUInt32BE(0, 2);
    frame.writeUInt32BE(length, 6);
  }
  frame.write(text, head, 'utf8');
  return frame;
}
